// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Mesh loops: the airfoil benchmark against its stored states with every executor,
// message counts of the POETS protocol, INC and reductions on random meshes, and the errors.
#include "test_error_support.hpp"

#include <doctest/doctest.h>

#include <korch/error.hpp>
#include <korch/mesh.hpp>
#include "airfoil.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#ifndef KORCH_MESH_DATA_DIR
#error "KORCH_MESH_DATA_DIR must name apps/mesh/data (set in unit_tests/CMakeLists.txt)"
#endif

using namespace korch;
using namespace korch::mesh;
using korch::test::error_of;
namespace af = korch::mesh::airfoil;

namespace {

std::string airfoil_dir() {
  const std::string dir = std::string(KORCH_MESH_DATA_DIR) + "/airfoil-162";
  if (!std::filesystem::exists(dir + "/mesh.dat")) {
    throw Error::format(
        "airfoil test data not found: '{}/mesh.dat' is missing; the airfoil data ships in "
        "apps/mesh/data (KORCH_MESH_DATA_DIR = '{}')",
        dir, KORCH_MESH_DATA_DIR);
  }
  return dir;
}

struct AirfoilData {
  af::MeshData mesh;
  af::Constants constants;
  // ref[i][k]: state after step k of iteration i+1 (i = 0..3)
  std::vector<std::array<af::CellState, 2>> ref;
};

const AirfoilData& airfoil_data() {
  static const AirfoilData data = [] {
    AirfoilData d;
    const std::string dir = airfoil_dir();
    d.mesh = af::read_mesh(dir + "/mesh.dat");
    d.constants = af::read_constants(dir + "/constants.txt");
    for (int it = 1; it <= 4; ++it) {
      std::array<af::CellState, 2> s;
      for (int k = 0; k < 2; ++k)
        s[static_cast<std::size_t>(k)] =
            af::read_state(dir + "/state_iter" + std::to_string(it) + "_k" + std::to_string(k) + ".txt", d.mesh.ncell);
      d.ref.push_back(s);
    }
    return d;
  }();
  return data;
}

const double ref_rms[4][2] = {
    {8.22736e-03, 7.18425e-03}, {7.01391e-03, 5.96866e-03}, {5.87310e-03, 4.86696e-03}, {4.82666e-03, 3.88920e-03}};

// Runs iterations 1..4 step by step; returns the largest difference from the stored states and
// checks the rms of every step against the README's values.
double airfoil_four_iterations(Executor& ex) {
  const AirfoilData& d = airfoil_data();
  af::Problem problem(d.mesh, d.constants);
  double worst = 0;
  for (int it = 0; it < 4; ++it) {
    ex.run(problem.save_soln());
    for (int k = 0; k < 2; ++k) {
      const double rms = problem.step(ex);
      CHECK(rms == doctest::Approx(ref_rms[it][k]).epsilon(1e-5));
      worst = std::max(worst, problem.max_difference(d.ref[static_cast<std::size_t>(it)][static_cast<std::size_t>(k)]));
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("Airfoil: reference_constants() are, to the bit, the constants stored with the reference data set") {
  const af::Constants stored = airfoil_data().constants;
  const af::Constants made = af::reference_constants();
  CHECK(made.gam == stored.gam);
  CHECK(made.gm1 == stored.gm1);
  CHECK(made.cfl == stored.cfl);
  CHECK(made.eps == stored.eps);
  CHECK(made.mach == stored.mach);
  CHECK(made.alpha == stored.alpha);
  CHECK(made.qinf == stored.qinf);
}

TEST_CASE(
    "Airfoil: the sequential executor reproduces the stored states of iterations 1-4 to round-off (1e-14) and the "
    "stored rms") {
  SequentialExecutor seq;
  const double worst = airfoil_four_iterations(seq);
  MESSAGE("sequential: largest difference " << worst);
  CHECK(worst < 1e-14);
}

TEST_CASE(
    "Airfoil: the direct executor (colouring and atomics) reproduces the stored states of iterations 1-4 to 1e-12") {
  for (IncMode mode : {IncMode::Colouring, IncMode::Atomics}) {
    DirectExecutor direct(DirectOptions{mode});
    const double worst = airfoil_four_iterations(direct);
    MESSAGE(direct.name() << ": largest difference " << worst);
    CHECK(worst < 1e-12);
  }
}

TEST_CASE(
    "Airfoil: the message-driven executor reproduces the stored states of iterations 1-4 to 1e-12, in order and in "
    "random order") {
  std::vector<MessageOptions> configs(3);
  configs[0].threads = 2;
  configs[1].threads = 1;
  configs[1].random_seed = 7;
  configs[2].threads = 2;
  configs[2].random_seed = 12345;
  for (const auto& o : configs) {
    MessageExecutor md(o);
    const double worst = airfoil_four_iterations(md);
    MESSAGE(md.name() << ": largest difference " << worst << ", " << md.total_counts().delivered() << " messages");
    CHECK(worst < 1e-12);
  }
}

TEST_CASE("Airfoil: sequential and direct executors reach the stored iteration-1000 state") {
  const AirfoilData& d = airfoil_data();
  const std::string dir = airfoil_dir();
  const af::CellState ref1000 = af::read_state(dir + "/state_iter1000_k1.txt", d.mesh.ncell);
  SequentialExecutor seq;
  DirectExecutor direct;
  for (Executor* ex : {static_cast<Executor*>(&seq), static_cast<Executor*>(&direct)}) {
    af::Problem problem(d.mesh, d.constants);
    for (int it = 0; it < 1000; ++it) problem.iterate(*ex);
    const double diff = problem.max_difference(ref1000);
    MESSAGE(ex->name() << ": iteration 1000 differs by " << diff);
    CHECK(diff < 1e-10);
  }
}

TEST_CASE(
    "Protocol: every involved device gets exactly one begin, sends one end, and receives write_recv_expected writes, "
    "under random delivery") {
  const AirfoilData& d = airfoil_data();
  std::uint64_t early = 0;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    MessageOptions o;
    o.threads = seed == 3 ? 2 : 1;
    o.random_seed = seed;
    MessageExecutor md(o);
    af::Problem problem(d.mesh, d.constants);
    for (ParLoopBase* loop : problem.loops()) {
      if (loop == &problem.update()) problem.rms.set(0.0);
      md.run(*loop);
      const InvocationReport& r = md.last_report();
      INFO("invocation " << r.invocation << ", seed " << seed);
      int expected_devices = 0;
      for (const auto& s : r.sets) expected_devices += s.size;
      CHECK(r.devices == expected_devices);
      CHECK(r.counts.begin == static_cast<std::uint64_t>(r.devices));
      CHECK(r.counts.end == static_cast<std::uint64_t>(r.devices));
      CHECK(r.counts.execute == static_cast<std::uint64_t>(r.devices));
      std::uint64_t wexp = 0;
      for (int dev = 0; dev < r.devices; ++dev) {
        const std::size_t du = static_cast<std::size_t>(dev);
        REQUIRE(r.begin[du] == 1);
        REQUIRE(r.end[du] == 1);
        REQUIRE(r.execute[du] == 1);
        REQUIRE(r.write_recv[du] == r.write_recv_expected[du]);
        REQUIRE(r.read_recv[du] == r.read_recv_expected[du]);
        wexp += static_cast<std::uint64_t>(r.write_recv_expected[du]);
      }
      CHECK(r.counts.write_recv == wexp);
      CHECK(r.counts.write_send == r.counts.write_recv);
      early += r.counts.early;
    }
    // res_calc: 303 edges, 190 nodes, 162 cells; 6 indirect reads and 2 indirect INCs per edge.
    md.run(problem.res_calc());
    const auto& c = md.last_report().counts;
    CHECK(md.last_report().devices == 303 + 190 + 162);
    CHECK(c.read_recv == 303u * 6u);
    CHECK(c.write_recv == 303u * 2u);
    CHECK(c.read_send == 190u + 2u * 162u);  // x from every node; q and adt from every cell
  }
  MESSAGE("reads/writes that overtook their device's begin: " << early);
  CHECK(early > 0);
}

TEST_CASE("Protocol: the compiled device graph dump names device types, pins, state, properties and edges") {
  const AirfoilData& d = airfoil_data();
  af::Problem problem(d.mesh, d.constants);
  MessageExecutor md;
  const std::string text = md.dump(problem.res_calc(), 4);
  for (const char* s : {"device type set_edges",
                        "device type set_nodes",
                        "device type set_cells",
                        "device type global",
                        "res_calc_arg6_buffer",
                        "res_calc_arg0_read_recv",
                        "res_calc_dat_x_read_send",
                        "res_calc_dat_res_write_recv",
                        "res_calc_arg7_write_send",
                        "res_calc_write_recv_expected",
                        "res_calc_read_recv_total",
                        "res_calc_in_progress",
                        "res_calc_edges_write_send_mask_all",
                        "set_cells::dat_res",
                        "global_k",
                        "length_edges = 303",
                        "-> set_edges[",
                        "read edges",
                        "res_calc_begin",
                        "res_calc_end"}) {
    INFO(s);
    CHECK(text.find(s) != std::string::npos);
  }
  MESSAGE(md.dump(problem.update(), 2));
}

// ---------------------------------------------------------------------------------------------
namespace {

struct Scatter {  // w direct READ, a via m[0], m[1] READ, acc via m[0], m[2] INC, cnt via m[0] INC, globals
  KOKKOS_INLINE_FUNCTION void operator()(const double* w, const double* a0, const double* a1, double* acc0,
                                         double* acc2, int* cnt0, double* gsum, double* gmin, double* gmax,
                                         int* gcount) const {
    const double v = w[0] * a0[0] - a1[1];
    acc0[0] += v;
    acc0[1] -= 0.5 * v;
    acc2[0] += w[0];
    acc2[1] += a1[0];
    cnt0[0] += 1;
    gsum[0] += v;
    gsum[1] += w[0] * w[0];
    gmin[0] = v < gmin[0] ? v : gmin[0];
    gmax[0] = v > gmax[0] ? v : gmax[0];
    gcount[0] += 1;
  }
};

struct SelfInc {  // over S with a map S -> S: direct INC and indirect INC of the same dat
  KOKKOS_INLINE_FUNCTION void operator()(const double* w, double* s_self, double* s_nb) const {
    s_self[0] += w[0];
    s_nb[0] += 2.0 * w[0];
  }
};

struct Permute {  // RW through a one-to-one map
  KOKKOS_INLINE_FUNCTION void operator()(const double* w, double* t) const { t[0] = 2.0 * t[0] + w[0]; }
};

struct RandomMesh {
  Set from{"from", 500}, to{"to", 137}, slots{"slots", 530};
  Map m, self, perm;
  Dat<double, 1> w{"w", from};
  Dat<double, 2> a{"a", to};
  Dat<double, 2> acc{"acc", to};
  Dat<int, 1> cnt{"cnt", to};
  Dat<double, 1> s{"s", from};
  Dat<double, 1> t{"t", slots};
  Global<double, 2> gsum{"gsum", {0.0, 0.0}};
  Global<double> gmin{"gmin", 1e300};
  Global<double> gmax{"gmax", -1e300};
  Global<int> gcount{"gcount", 0};

  explicit RandomMesh(unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<int> mv(500 * 3), sv(500), pv(530);
    for (auto& v : mv) v = static_cast<int>(rng() % 137);
    for (auto& v : sv) v = static_cast<int>(rng() % 500);
    for (int i = 0; i < 530; ++i) pv[static_cast<std::size_t>(i)] = i;
    std::shuffle(pv.begin(), pv.end(), rng);
    pv.resize(500);
    m = Map("m", from, to, 3, mv);
    self = Map("self", from, from, 1, sv);
    perm = Map("perm", from, slots, 1, pv);
    std::uniform_real_distribution<double> u(-1, 1);
    std::vector<double> wv(500), av(274), tv(530);
    for (auto& v : wv) v = u(rng);
    for (auto& v : av) v = u(rng);
    for (auto& v : tv) v = u(rng);
    w.assign(wv);
    a.assign(av);
    t.assign(tv);
    s.assign(wv);
  }
  void run(Executor& ex, int times) {
    auto scatter = par_loop("scatter", Scatter{}, from, arg(w, Access::Read), arg(a, m, 0, Access::Read),
                            arg(a, m, 1, Access::Read), arg(acc, m, 0, Access::Inc), arg(acc, m, 2, Access::Inc),
                            arg(cnt, m, 0, Access::Inc), arg(gsum, Access::Inc), arg(gmin, Access::Min),
                            arg(gmax, Access::Max), arg(gcount, Access::Inc));
    auto selfinc =
        par_loop("self_inc", SelfInc{}, from, arg(w, Access::Read), arg(s, Access::Inc), arg(s, self, 0, Access::Inc));
    auto permute = par_loop("permute", Permute{}, from, arg(w, Access::Read), arg(t, perm, 0, Access::RW));
    for (int i = 0; i < times; ++i) {
      ex.run(scatter);
      ex.run(selfinc);
      ex.run(permute);
    }
  }
};

void check_close(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]) / (1 + std::fabs(b[i])));
  CHECK(worst < tol);
}

}  // namespace

TEST_CASE(
    "Random meshes: indirect INC, direct+indirect INC, RW through a one-to-one map and INC/MIN/MAX globals agree with "
    "the sequential executor") {
  for (unsigned seed : {11u, 22u}) {
    RandomMesh ref(seed);
    SequentialExecutor seq;
    ref.run(seq, 2);
    std::vector<std::unique_ptr<Executor>> executors;
    executors.push_back(std::make_unique<DirectExecutor>(DirectOptions{IncMode::Colouring}));
    executors.push_back(std::make_unique<DirectExecutor>(DirectOptions{IncMode::Atomics}));
    executors.push_back(std::make_unique<MessageExecutor>(MessageOptions{2, 64, std::nullopt}));
    executors.push_back(std::make_unique<MessageExecutor>(MessageOptions{1, 1, seed}));
    executors.push_back(std::make_unique<MessageExecutor>(MessageOptions{2, 1, seed + 1}));
    for (auto& ex : executors) {
      INFO(ex->name() << ", seed " << seed);
      RandomMesh r(seed);
      r.run(*ex, 2);
      check_close(r.acc.to_vector(), ref.acc.to_vector(), 1e-13);
      check_close(r.s.to_vector(), ref.s.to_vector(), 1e-13);
      CHECK(r.t.to_vector() == ref.t.to_vector());  // one writer per slot: exact
      CHECK(r.cnt.to_vector() == ref.cnt.to_vector());
      CHECK(r.gsum.value(0) == doctest::Approx(ref.gsum.value(0)).epsilon(1e-12));
      CHECK(r.gsum.value(1) == doctest::Approx(ref.gsum.value(1)).epsilon(1e-12));
      CHECK(r.gmin.value() == ref.gmin.value());
      CHECK(r.gmax.value() == ref.gmax.value());
      CHECK(r.gcount.value() == 2 * 500);
    }
  }
}

TEST_CASE("Colouring: elements of one colour share no indirectly modified target") {
  RandomMesh r(5);
  auto scatter = par_loop("scatter", Scatter{}, r.from, arg(r.w, Access::Read), arg(r.a, r.m, 0, Access::Read),
                          arg(r.a, r.m, 1, Access::Read), arg(r.acc, r.m, 0, Access::Inc),
                          arg(r.acc, r.m, 2, Access::Inc), arg(r.cnt, r.m, 0, Access::Inc), arg(r.gsum, Access::Inc),
                          arg(r.gmin, Access::Min), arg(r.gmax, Access::Max), arg(r.gcount, Access::Inc));
  const DirectPlan plan = make_direct_plan(scatter, IncMode::Colouring);
  REQUIRE(!plan.natural_order);
  auto order = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), plan.order);
  for (int c = 0; c < plan.n_colours(); ++c) {
    std::vector<int> acc_used(137, 0), cnt_used(137, 0);
    for (int i = plan.colour_offsets[static_cast<std::size_t>(c)];
         i < plan.colour_offsets[static_cast<std::size_t>(c) + 1]; ++i) {
      const int e = order(i);
      const int t0 = r.m(e, 0), t2 = r.m(e, 2);  // one element may name a target twice
      REQUIRE(acc_used[static_cast<std::size_t>(t0)]++ == 0);
      if (t2 != t0) REQUIRE(acc_used[static_cast<std::size_t>(t2)]++ == 0);
      REQUIRE(cnt_used[static_cast<std::size_t>(r.m(e, 0))]++ == 0);
    }
  }
  const DirectPlan atomics = make_direct_plan(scatter, IncMode::Atomics);
  CHECK(atomics.natural_order);

  // A direct INC of a dat that is also INCremented indirectly: the element itself is a target too,
  // in both modes.
  auto selfinc = par_loop("self_inc", SelfInc{}, r.from, arg(r.w, Access::Read), arg(r.s, Access::Inc),
                          arg(r.s, r.self, 0, Access::Inc));
  for (IncMode mode : {IncMode::Colouring, IncMode::Atomics}) {
    const DirectPlan p = make_direct_plan(selfinc, mode);
    REQUIRE(!p.natural_order);
    auto ord = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p.order);
    for (int c = 0; c < p.n_colours(); ++c) {
      std::vector<int> used(500, 0);
      for (int i = p.colour_offsets[static_cast<std::size_t>(c)]; i < p.colour_offsets[static_cast<std::size_t>(c) + 1];
           ++i) {
        const int e = ord(i), t = r.self(e, 0);
        REQUIRE(used[static_cast<std::size_t>(e)]++ == 0);
        if (t != e) REQUIRE(used[static_cast<std::size_t>(t)]++ == 0);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
namespace {
struct Any {
  template <class... T>
  KOKKOS_INLINE_FUNCTION void operator()(T*...) const {}
};

}  // namespace

TEST_CASE(
    "Validation: each invalid argument combination is rejected when the loop is built, naming loop and argument") {
  Set cells("cells", 4), edges("edges", 5), nodes("nodes", 6);
  Map pecell("pecell", edges, cells, 2, {0, 1, 1, 2, 2, 3, 3, 0, 0, 2});
  Map pcell("pcell", cells, nodes, 1, {0, 1, 2, 3});
  Dat<double, 2> x("x", nodes);
  x.read_only();
  Dat<double, 4> res("res", cells), q("q", cells);
  Dat<double, 1> w("w", edges);
  Global<double> rms("rms", 0.0);
  Global<double> gam("gam", 1.4, GlobalKind::Constant);

  auto expect = [](const std::string& msg, std::initializer_list<const char*> parts) {
    INFO(msg);
    REQUIRE(!msg.empty());
    for (const char* p : parts) CHECK(msg.find(p) != std::string::npos);
  };
  expect(error_of([&] { par_loop("bad_inc", Any{}, cells, arg(q, Access::Read), arg(x, pcell, 0, Access::Inc)); }),
         {"par_loop 'bad_inc'", "argument 1", "INC on read-only dat 'x'"});
  expect(error_of([&] {
           par_loop("two_rw", Any{}, edges, arg(res, pecell, 0, Access::RW), arg(res, pecell, 1, Access::Write));
         }),
         {"par_loop 'two_rw'", "argument 1", "argument 0", "only one indirect WRITE/RW"});
  expect(
      error_of([&] { par_loop("wrong_source", Any{}, edges, arg(x, pcell, 0, Access::Read)); }),
      {"par_loop 'wrong_source'", "argument 0", "map 'pcell' goes from set 'cells'", "not the iteration set 'edges'"});
  expect(error_of([&] { par_loop("arity", Any{}, edges, arg(w, Access::Read), arg(res, pecell, 2, Access::Inc)); }),
         {"par_loop 'arity'", "argument 1", "index 2 is out of range for map 'pecell' of arity 2"});
  expect(error_of([&] { par_loop("neg_index", Any{}, edges, arg(res, pecell, -1, Access::Inc)); }),
         {"par_loop 'neg_index'", "argument 0", "index -1 is out of range"});
  expect(
      error_of([&] { par_loop("wrong_target", Any{}, cells, arg(q, Access::Read), arg(res, pcell, 0, Access::Read)); }),
      {"argument 1", "map 'pcell' leads to set 'nodes'", "dat 'res' lives on set 'cells'"});
  expect(error_of([&] { par_loop("direct_other_set", Any{}, edges, arg(q, Access::Read)); }),
         {"par_loop 'direct_other_set'", "argument 0", "lives on set 'cells', not on the iteration set 'edges'"});
  expect(error_of([&] {
           par_loop("inc_read", Any{}, edges, arg(q, pecell, 0, Access::Read), arg(q, pecell, 1, Access::Inc));
         }),
         {"par_loop 'inc_read'", "argument 1", "argument 0", "INCremented may not also be READ"});
  expect(error_of([&] { par_loop("write_read", Any{}, cells, arg(q, Access::Write), arg(q, Access::Read)); }),
         {"par_loop 'write_read'", "argument 1", "WRITEs or RWs must have no other use"});
  expect(error_of([&] { par_loop("min_dat", Any{}, cells, arg(q, Access::Min)); }),
         {"par_loop 'min_dat'", "argument 0", "MIN/MAX are for globals"});
  expect(error_of([&] { par_loop("const_inc", Any{}, cells, arg(q, Access::Read), arg(gam, Access::Inc)); }),
         {"par_loop 'const_inc'", "argument 1", "'gam' is a constant (read-only) global"});
  expect(error_of([&] { par_loop("gbl_write", Any{}, cells, arg(rms, Access::Write)); }),
         {"par_loop 'gbl_write'", "argument 0", "every element would assign the same global"});
  // Valid: the same loops with the fixes the messages suggest.
  CHECK_NOTHROW(par_loop("ok", Any{}, edges, arg(res, pecell, 0, Access::Inc), arg(res, pecell, 1, Access::Inc),
                         arg(rms, Access::Inc)));

  // The message-driven executor cannot deliver racing WRITEs: WRITE through a shared target.
  auto shared_write = par_loop("shared_write", Any{}, edges, arg(q, pecell, 0, Access::Write));
  MessageExecutor md;
  expect(error_of([&] { md.run(shared_write); }), {"par_loop 'shared_write'", "argument 0", "share a target"});
  SequentialExecutor seq;
  CHECK_NOTHROW(seq.run(shared_write));
}

TEST_CASE("Invocations: a loop name used twice gets a uniquified invocation name") {
  Set s("s", 3);
  Dat<double, 1> d("d", s);
  auto a = par_loop("k", Any{}, s, arg(d, Access::RW));
  auto b = par_loop("k", Any{}, s, arg(d, Access::Read));
  MessageExecutor md;
  CHECK(md.invocation_name(a) == "k");
  CHECK(md.invocation_name(b) == "k_2");
  CHECK(md.invocation_name(a) == "k");
}

TEST_CASE("Mesh files: bad input gives an error naming file, line and field") {
  const auto dir = std::filesystem::temp_directory_path() / ("korch_mesh_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
  };
  const std::string good = "4 1 0 4\n0 0\n1 0\n1 1\n0 1\n0 1 2 3\n0 1 0 1\n1 2 0 2\n2 3 0 1\n3 0 0 2\n";
  CHECK_NOTHROW(af::read_mesh(write("good.dat", good)));
  struct Case {
    std::string text;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"4 1 0\n", {"line 1", "the header has 3 fields, expected 4", "nbedge"}},
      {"4 1 0 4\n0 0\n1 zero\n1 1\n0 1\n0 1 2 3\n0 1 0 1\n1 2 0 2\n2 3 0 1\n3 0 0 2\n",
       {"line 3", "field 'y of node 1' is 'zero', not a finite number"}},
      {"4 1 0 4\n0 0\n1 0\n1 1\n0 1\n0 1 2 9\n0 1 0 1\n1 2 0 2\n2 3 0 1\n3 0 0 2\n",
       {"line 6", "field 'node 4 of cell 0' is 9, outside [0, 4)"}},
      {"4 1 0 4\n0 0\n1 0\n1 1\n0 1\n0 1 2 3\n0 1 0 3\n1 2 0 2\n2 3 0 1\n3 0 0 2\n",
       {"line 7", "bound of boundary edge 0", "is 3, outside [1, 3)"}},
      // A file too short for its header's counts is reported at the header, before anything is read.
      {"4 1 0 4\n0 0\n1 0\n1 1\n0 1\n0 1 2 3\n0 1 0 1\n", {"line 1", "field 'nbedge' is 4", "cut short"}},
      {"4 1 0 4\n0 0\n1 0\n1 1\n0 1\n0 1 2 3\n0 1 0 1\n1 2 0 2\n2 3 0 1\n\n\n\n\n\n\n\n\n\n",
       {"line 10", "boundary edge 3 has 0 fields, expected 4"}},
      {good + "1 2 3 4\n", {"line 11", "unexpected data after the 4 boundary edges"}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string path = write("bad" + std::to_string(i) + ".dat", cases[i].text);
    const std::string msg = error_of([&] { af::read_mesh(path); });
    INFO(msg);
    CHECK(msg.find("file '" + path + "'") != std::string::npos);
    for (const auto& p : cases[i].parts) CHECK(msg.find(p) != std::string::npos);
  }
  const std::string c =
      write("constants.txt", "gam 1.4\ngm1 0.4\ncfl 0.9\neps 0.05\nmach 0.4\nalpha 0.05\nqinf 1 2 3\n");
  const std::string msg = error_of([&] { af::read_constants(c); });
  CHECK(msg.find("line 7") != std::string::npos);
  CHECK(msg.find("constant 'qinf' has 3 values, expected 4") != std::string::npos);
  CHECK(error_of([&] { af::read_mesh((dir / "missing.dat").string()); }).find("cannot open") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("Generator: O-grid meshes are oriented like the reference and every executor agrees on them") {
  const af::MeshData m = af::generate_ogrid(48, 12);
  CHECK(m.ncell == 48 * 12);
  CHECK(m.nbedge == 2 * 48);
  auto X = [&](int n) { return m.x[2 * static_cast<std::size_t>(n)]; };
  auto Y = [&](int n) { return m.x[2 * static_cast<std::size_t>(n) + 1]; };
  auto centre = [&](int c, double& cx, double& cy) {
    cx = cy = 0;
    for (int k = 0; k < 4; ++k) {
      cx += 0.25 * X(m.cell[4 * static_cast<std::size_t>(c) + k]);
      cy += 0.25 * Y(m.cell[4 * static_cast<std::size_t>(c) + k]);
    }
  };
  for (int c = 0; c < m.ncell; ++c) {
    double a = 0;
    for (int k = 0; k < 4; ++k) {
      const int p = m.cell[4 * static_cast<std::size_t>(c) + k],
                q = m.cell[4 * static_cast<std::size_t>(c) + (k + 1) % 4];
      a += X(p) * Y(q) - X(q) * Y(p);
    }
    REQUIRE(a > 0);
  }
  for (int e = 0; e < m.nedge; ++e) {
    const int a = m.edge[2 * static_cast<std::size_t>(e)], b = m.edge[2 * static_cast<std::size_t>(e) + 1];
    double x1, y1, x2, y2;
    centre(m.ecell[2 * static_cast<std::size_t>(e)], x1, y1);
    centre(m.ecell[2 * static_cast<std::size_t>(e) + 1], x2, y2);
    REQUIRE((Y(a) - Y(b)) * (x2 - x1) - (X(a) - X(b)) * (y2 - y1) > 0);
  }
  const af::Constants k = airfoil_data().constants;
  af::Problem ref(m, k), direct_p(m, k), md_p(m, k);
  SequentialExecutor seq;
  DirectExecutor direct;
  MessageExecutor md;
  for (int it = 0; it < 3; ++it) {
    const auto r = ref.iterate(seq);
    const auto d = direct_p.iterate(direct);
    const auto g = md_p.iterate(md);
    CHECK(std::isfinite(r[1]));
    CHECK(d[1] == doctest::Approx(r[1]).epsilon(1e-12));
    CHECK(g[1] == doctest::Approx(r[1]).epsilon(1e-12));
  }
  CHECK(direct_p.max_difference(ref.state()) < 1e-12);
  CHECK(md_p.max_difference(ref.state()) < 1e-12);
}
