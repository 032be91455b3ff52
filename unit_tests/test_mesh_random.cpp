// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Mesh loops on random meshes: indirect and direct INC, RW through a one-to-one map and INC/MIN/MAX
// globals on every executor against the sequential one, the colouring's rule, and the names of
// invocations.
#include "test_error_support.hpp"

#include <doctest/doctest.h>

#include <korch/error.hpp>
#include <korch/mesh.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_mesh_random {

using namespace korch;
using namespace korch::mesh;
using korch::test::error_of;

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

}  // namespace test_mesh_random
