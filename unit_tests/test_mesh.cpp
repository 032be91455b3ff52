// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Mesh loops: the airfoil benchmark against its stored states with every executor, message counts
// of the POETS protocol, errors in mesh files, and generated O-grid meshes. Random meshes:
// test_mesh_random.cpp.
#include "test_error_support.hpp"

#include <doctest/doctest.h>

#include <korch/error.hpp>
#include <korch/mesh.hpp>
#include "airfoil.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
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
