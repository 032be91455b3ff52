// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hydro solver: options, conservation, symmetry, Sod vs the exact solution, convergence,
// and bitwise identity across configurations.
#include "exact_riemann.hpp"
#include "options.hpp"
#include "runtime_configuration.hpp"
#include "simulation.hpp"
#include "test_sanitized.hpp"

#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

using namespace korch::hydro;

namespace {

Options small(Problem problem, const char* config = "cpu") {
  Options o;
  o.problem = problem;
  o.config = parse_configuration(config);
  o.threads = 2;
  o.blocks = 2;
  o.cells_per_block = 16;
  o.quiet = true;
  o.write_output = false;
  return o;
}

}  // namespace

TEST_CASE("hydro: --config takes the built-in configurations' names and their short aliases") {
  const std::vector<std::string> builtins = korch::configurations::names();
  const std::pair<const char*, const char*> names[] = {{"cpu_only", "cpu"},
                                                       {"gpu_only", "device"},
                                                       {"cpu_gpu_data_parallel", "split"},
                                                       {"cpu_gpu_action_parallel", "action-parallel"}};
  for (const auto& name : names) {
    const char* const builtin = name.first;  // not a structured binding: INFO captures it in a lambda
    const char* const alias = name.second;
    INFO(builtin);
    const HydroConfiguration c = parse_options({"--config", builtin}).config;
    CHECK(parse_options({"--config", alias}).config == c);
    CHECK(std::string(builtin_name(c)) == builtin);
    CHECK(std::find(builtins.begin(), builtins.end(), builtin) != builtins.end());
  }
  std::string what;
  try {
    parse_options({"--config", "gpu"});
  } catch (const korch::Error& e) {
    what = e.what();
  }
  CHECK(what.find("--config") != std::string::npos);
  CHECK(what.find("'gpu'") != std::string::npos);
  CHECK(what.find("cpu_only (or cpu), gpu_only (or device)") != std::string::npos);
  CHECK_THROWS_WITH_AS(parse_configuration("gpu"), doctest::Contains("option --config: unknown configuration 'gpu'"),
                       korch::Error);
}

TEST_CASE("hydro: options that make no sense are rejected, naming the option") {
  CHECK_THROWS_WITH_AS(parse_options({"--steps", "3", "--tmax", "0.1"}), doctest::Contains("--steps and --tmax"),
                       korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--config", "cpu", "--packet-blocks", "2"}), doctest::Contains("--packet-blocks"),
                       korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--config", "device", "--tile", "8"}), doctest::Contains("--tile"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--problem", "sod-z"}), doctest::Contains("--dim 2"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--threads", "two"}), doctest::Contains("--threads"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--config", "gpu"}), doctest::Contains("--config"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--dim", "4"}), doctest::Contains("--dim"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--cells-per-block", "1"}), doctest::Contains("--cells-per-block"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--tile", "64"}), doctest::Contains("--tile"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--steps"}), doctest::Contains("--steps"), korch::Error);  // no value
  CHECK_THROWS_WITH_AS(parse_options({"--steps", "3x"}), doctest::Contains("--steps"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--steps", "0"}), doctest::Contains("--steps"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--cfl", "nan"}), doctest::Contains("--cfl"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--tmax", "inf"}), doctest::Contains("--tmax"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--blocks", "46341", "--cells-per-block", "2"}), doctest::Contains("--blocks"),
                       korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--bogus"}), doctest::Contains("--bogus"), korch::Error);
  CHECK_THROWS_WITH_AS(parse_options({"--conduction", "-1"}), doctest::Contains("--conduction"), korch::Error);
  const Options o = parse_options(
      {"--config", "split", "--threads", "3", "--tile", "8", "--packet-blocks", "4", "--problem", "sod-y"});
  CHECK(o.config == HydroConfiguration::split);
  CHECK(o.threads == 3);
  CHECK(o.tile == 8);
  CHECK(o.packet_blocks == 4);
  CHECK(o.problem == Problem::sod_y);
  CHECK(!o.log_scale);
  CHECK(parse_options({"--log"}).log_scale);
  bool help = false;
  parse_options({"--help"}, &help);
  CHECK(help);
}

TEST_CASE("hydro: --packet-blocks takes a count or auto; auto sizes packets to fill a GPU, 2 blocks elsewhere") {
  CHECK(parse_options({"--config", "device"}).packet_blocks == 0);
  CHECK(parse_options({"--config", "device", "--packet-blocks", "auto"}).packet_blocks == 0);
  CHECK(parse_options({"--config", "device", "--packet-blocks", "7"}).packet_blocks == 7);
  for (const char* bad : {"0", "-3", "many", "2.5"}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(parse_options({"--config", "device", "--packet-blocks", bad}),
                         doctest::Contains("--packet-blocks"), korch::Error);
  }
  Options o = parse_options({"--config", "device", "--threads", "8", "--blocks", "16", "--cells-per-block", "256"});
  // 2D 4096^2 in blocks of 256^2: 16 blocks make 2^20 cells; 256 blocks over 8 threads allow 32
  CHECK(device_packet_blocks(o) == (device_is_accelerator ? 16 : 2));
  o.dim = 3;
  o.blocks = 8;
  o.cells_per_block = 32;  // 3D 256^3 in blocks of 32^3: 32 blocks make 2^20 cells; 512 / 8 allow 64
  CHECK(device_packet_blocks(o) == (device_is_accelerator ? 32 : 2));
  // 2 ranks: 256 blocks each over 8 threads allow 32; 16 ranks: 32 each, 4 per thread
  CHECK(device_packet_blocks(o, 2) == (device_is_accelerator ? 32 : 2));
  CHECK(device_packet_blocks(o, 16) == (device_is_accelerator ? 4 : 2));
  o.blocks = 2;  // 8 blocks over 8 threads: one each
  CHECK(device_packet_blocks(o) == (device_is_accelerator ? 1 : 2));
  o.packet_blocks = 5;
  CHECK(device_packet_blocks(o) == 5);
}

TEST_CASE("hydro: split learns its shares from a first cycle that gives a GPU 15 blocks of 16") {
  CHECK(split_start_weights(true) == std::vector<double>{1, 15});
  CHECK(split_start_weights(false) == std::vector<double>{1, 1});
  const auto group = [](const std::vector<std::string>& args) {
    return make_configuration(parse_options(args)).distributor.groups.at(0);
  };
  const auto learned = group({"--config", "split"});
  CHECK(learned.policy == korch::DistributionPolicy::throughput);
  CHECK(learned.weights == split_start_weights(korch::device_is_accelerator));
  const auto even = group({"--config", "split", "--split-even"});
  CHECK(even.policy == korch::DistributionPolicy::fixed_fraction);
  CHECK(even.weights == std::vector<double>{1, 1});
}

TEST_CASE("hydro: Sedov conserves mass and energy (periodic box)") {
  Options o = small(Problem::sedov);
  o.boundary = Boundary::periodic;
  Simulation sim(o);
  const auto t0 = sim.totals();
  for (int s = 0; s < 20; ++s) sim.step();
  const auto t1 = sim.totals();
  CHECK(std::fabs(t1[0] - t0[0]) <= 1e-12 * std::fabs(t0[0]));
  CHECK(std::fabs(t1[4] - t0[4]) <= 1e-12 * std::fabs(t0[4]));
}

namespace {

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// L1 error of density against the exact Sod solution along axis a (cell centres, t = time).
double sod_l1(Simulation& sim, int axis) {
  const auto n = sim.global_cells();
  const auto rho = sim.gather(0);
  const Primitive1D L{1.0, 0.0, 1.0}, R{0.125, 0.0, 0.1};
  const double dx = sim.dx()[static_cast<std::size_t>(axis)];
  double err = 0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const int c[3] = {i, j, k};
        const double x = (c[axis] + 0.5) * dx;
        const double exact = exact_riemann(L, R, 1.4, (x - 0.5) / sim.time()).rho;
        err += std::fabs(rho[static_cast<std::size_t>(i + n[0] * (j + n[1] * k))] - exact);
      }
  return err / static_cast<double>(rho.size());
}

double wave_l1(int blocks, int cells, int dim = 2, double tmax = 0.25) {
  Options o = small(Problem::wave);
  o.blocks = blocks;
  o.cells_per_block = cells;
  o.dim = dim;
  Simulation sim(o);
  while (sim.time() < tmax * (1 - 1e-12)) sim.step(tmax - sim.time());
  const auto n = sim.global_cells();
  const auto rho = sim.gather(0);
  const double dx = sim.dx()[0];
  double err = 0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const double x = (i + 0.5) * dx - 1.0 * sim.time(), y = (j + 0.5) * dx - 0.5 * sim.time();
        const double z = dim == 3 ? (k + 0.5) * dx - 0.25 * sim.time() : 0.0;
        const double exact = 1.0 + 0.2 * std::sin(2.0 * 3.14159265358979323846 * (x + y + z));
        err += std::fabs(rho[static_cast<std::size_t>(i + n[0] * (j + n[1] * k))] - exact);
      }
  return err / static_cast<double>(rho.size());
}

}  // namespace

TEST_CASE("hydro: exact Riemann solver reproduces the Sod star state") {
  const Primitive1D L{1.0, 0.0, 1.0}, R{0.125, 0.0, 0.1};
  const auto left_star = exact_riemann(L, R, 1.4, 0.5);   // between rarefaction tail (-0.07) and contact (0.927)
  const auto right_star = exact_riemann(L, R, 1.4, 1.2);  // between contact (0.927) and shock (1.752)
  CHECK(left_star.p == doctest::Approx(0.30313).epsilon(1e-4));
  CHECK(left_star.u == doctest::Approx(0.92745).epsilon(1e-4));
  CHECK(left_star.rho == doctest::Approx(0.42632).epsilon(1e-4));
  CHECK(right_star.p == doctest::Approx(0.30313).epsilon(1e-4));
  CHECK(right_star.rho == doctest::Approx(0.26557).epsilon(1e-4));
  CHECK(exact_riemann(L, R, 1.4, -2.0).rho == 1.0);
  CHECK(exact_riemann(L, R, 1.4, 2.0).rho == 0.125);
  CHECK_THROWS_AS(exact_riemann({1, 0, -1}, R, 1.4, 0.0), korch::Error);
}

TEST_CASE("hydro: Sedov is quadrant symmetric to round-off") {
  Options o = small(Problem::sedov);
  Simulation sim(o);
  for (int s = 0; s < 30; ++s) sim.step();
  const auto n = sim.global_cells();
  for (int var : {0, 4}) {
    const auto f = sim.gather(var);
    const double scale = max_abs(f);
    double worst = 0;
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const double v = f[static_cast<std::size_t>(i + n[0] * j)];
        worst = std::max(worst, std::fabs(v - f[static_cast<std::size_t>(n[0] - 1 - i + n[0] * j)]));
        worst = std::max(worst, std::fabs(v - f[static_cast<std::size_t>(i + n[0] * (n[1] - 1 - j))]));
        worst = std::max(worst, std::fabs(v - f[static_cast<std::size_t>(j + n[0] * i)]));
      }
    INFO("variable " << var << " worst asymmetry " << worst << " of " << scale);
    CHECK(worst <= 1e-12 * scale);
  }
  // x-momentum is odd under x -> -x
  const auto mx = sim.gather(1);
  double worst = 0;
  for (int j = 0; j < n[1]; ++j)
    for (int i = 0; i < n[0]; ++i)
      worst = std::max(worst, std::fabs(mx[static_cast<std::size_t>(i + n[0] * j)] +
                                        mx[static_cast<std::size_t>(n[0] - 1 - i + n[0] * j)]));
  CHECK(worst <= 1e-12 * max_abs(mx));
}

TEST_CASE("hydro: Sod along x and y against the exact solution") {
  for (Problem p : {Problem::sod_x, Problem::sod_y}) {
    Options o = small(p);
    o.blocks = 4;
    o.cells_per_block = 16;  // 64 cells along the tube
    Simulation sim(o);
    while (sim.time() < 0.2 * (1 - 1e-12)) sim.step(0.2 - sim.time());
    const double l1 = sod_l1(sim, p == Problem::sod_x ? 0 : 1);
    INFO(std::string(to_string(p)) << " L1 density error " << l1);
    // Measured 0.00746 at 64 cells (MC limiter, HLLC, CFL 0.4); bound 0.01.
    CHECK(l1 < 0.01);
  }
}

TEST_CASE("hydro: smooth density wave converges at second order") {
  const double e1 = wave_l1(2, 16), e2 = wave_l1(2, 32);
  const double order = std::log2(e1 / e2);
  INFO("L1 errors " << e1 << " " << e2 << " order " << order);
  MESSAGE("wave L1 errors " << e1 << " (32^2) " << e2 << " (64^2), order " << order);
  CHECK(order >= 1.8);
}

TEST_CASE("hydro: the same run is bitwise identical on every configuration") {
  auto run = [](const char* config, int tile) {
    Options o = small(Problem::sedov, config);
    o.tile = tile;
    Simulation sim(o);
    for (int s = 0; s < 8; ++s) sim.step();
    std::vector<double> all;
    for (int v = 0; v < 5; ++v) {
      auto f = sim.gather(v);
      all.insert(all.end(), f.begin(), f.end());
    }
    return all;
  };
  const auto ref = run("cpu", 0);
  CHECK(run("cpu", 8) == ref);
  CHECK(run("device", 0) == ref);
  CHECK(run("split", 4) == ref);
  CHECK(run("action-parallel", 0) == ref);
}

TEST_CASE("hydro: action-parallel diagnostics see the mass of the state they ran on") {
  Options o = small(Problem::sedov, "action-parallel");
  o.boundary = Boundary::periodic;
  Simulation sim(o);
  const double mass = sim.totals()[0];
  sim.step();
  double diag = 0;
  for (const auto& d : sim.diagnostics()) diag += d.mass;
  CHECK(diag == doctest::Approx(mass).epsilon(1e-12));
}

TEST_CASE("hydro: the same run agrees across backends to 1e-12 (checksum of Sedov 32^2 after 10 steps)") {
  Options o = small(Problem::sedov);
  Simulation sim(o);
  for (int s = 0; s < 10; ++s) sim.step();
  const auto t = sim.totals();
  const auto rho = sim.gather(0);
  double sq = 0;
  for (double x : rho) sq += x * x;
  MESSAGE(fmt::format("checksum sedov 32^2 10 steps: t={:.17g} E={:.17g} sum rho^2={:.17g}", sim.time(), t[4], sq));
  // Reference: the serial build (g++ 12, Kokkos 3.4.01); the openmp build gave the same bits.
  CHECK(sim.time() == doctest::Approx(0.0139160412667402).epsilon(1e-12));
  CHECK(t[4] == doctest::Approx(1.0000242187499973).epsilon(1e-12));
  CHECK(sq == doctest::Approx(1032.7007544697292).epsilon(1e-12));
}

TEST_CASE("hydro: 3D Sod along z against the exact solution, 3D conservation") {
  Options o = small(Problem::sod_z);
  o.dim = 3;
  o.blocks = 2;
  o.cells_per_block = 16;  // 32^3 cells, 32 along the tube
  Simulation sim(o);
  const double tend = 0.1;
  while (sim.time() < tend * (1 - 1e-12)) sim.step(tend - sim.time());
  const double l1 = sod_l1(sim, 2);
  INFO("sod-z L1 density error " << l1);
  // Measured at 32 cells, t = 0.1; bound below.
  CHECK(l1 < 0.02);
  MESSAGE("sod-z 3D L1 density error " << l1);
}

TEST_CASE("hydro: 3D Sedov conserves mass and energy, is octant symmetric and the same on cpu and device") {
  auto make = [](const char* config) {
    Options o = small(Problem::sedov, config);
    o.dim = 3;
    o.blocks = 2;
    o.cells_per_block = 8;  // 16^3
    o.boundary = Boundary::periodic;
    return o;
  };
  Simulation sim(make("cpu"));
  const auto t0 = sim.totals();
  for (int s = 0; s < 10; ++s) sim.step();
  const auto t1 = sim.totals();
  CHECK(std::fabs(t1[0] - t0[0]) <= 1e-12 * std::fabs(t0[0]));
  CHECK(std::fabs(t1[4] - t0[4]) <= 1e-12 * std::fabs(t0[4]));
  const auto n = sim.global_cells();
  const auto f = sim.gather(0);
  double worst = 0;
  auto at = [&](int i, int j, int k) { return f[static_cast<std::size_t>(i + n[0] * (j + n[1] * k))]; };
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        worst = std::max(worst, std::fabs(at(i, j, k) - at(n[0] - 1 - i, j, k)));
        worst = std::max(worst, std::fabs(at(i, j, k) - at(i, j, n[2] - 1 - k)));
        worst = std::max(worst, std::fabs(at(i, j, k) - at(k, i, j)));
      }
  CHECK(worst <= 1e-12 * max_abs(f));
}

TEST_CASE("hydro: 3D run is bitwise identical on cpu (tiles), device and split") {
  auto run = [](const char* config, int tile) {
    Options o = small(Problem::sedov, config);
    o.dim = 3;
    o.blocks = 2;
    o.cells_per_block = 8;
    o.tile = tile;
    Simulation sim(o);
    for (int s = 0; s < 4; ++s) sim.step();
    std::vector<double> all;
    for (int v = 0; v < 5; ++v) {
      auto g = sim.gather(v);
      all.insert(all.end(), g.begin(), g.end());
    }
    return all;
  };
  const auto ref = run("cpu", 0);
  CHECK(run("cpu", 4) == ref);
  CHECK(run("device", 0) == ref);
  CHECK(run("split", 4) == ref);
}

TEST_CASE("hydro: --conduction runs the implicit solve between cycles (mass kept, heat spreads)") {
  auto peak = [](double kappa) {
    Options o = small(Problem::sedov);
    o.boundary = Boundary::periodic;
    o.conduction = kappa;
    Simulation sim(o);
    const double m0 = sim.totals()[0];
    // 2 steps: on the openmp build each conduction solve (OpenMP) leaves libgomp's workers spinning
    // on the cores the next cycle's team threads need, unless OMP_WAIT_POLICY=passive.
    for (int s = 0; s < 2; ++s) sim.step();
    CHECK(std::fabs(sim.totals()[0] - m0) <= 1e-12 * m0);
    const auto rho = sim.gather(0), E = sim.gather(4), mx = sim.gather(1), my = sim.gather(2);
    double tmax = 0;
    for (std::size_t c = 0; c < rho.size(); ++c)
      tmax = std::max(tmax, 0.4 * (E[c] - 0.5 * (mx[c] * mx[c] + my[c] * my[c]) / rho[c]) / rho[c]);
    return tmax;
  };
  const double without = peak(0.0);
  double with = 0;
  try {
    with = peak(0.05);
  } catch (const korch::Error& e) {
    const std::string what = e.what();
    if (what.find("Kokkos Kernels") != std::string::npos || what.find("no conduction") != std::string::npos) {
      MESSAGE("conduction unavailable in this build: " << what);
      return;
    }
    throw;
  }
  CHECK(with < without);
}

TEST_CASE("hydro: the per-cell kernel (device path) and the host scratch version give the same bits") {
  for (int dim : {2, 3}) {
    Options o = small(Problem::sedov);
    o.dim = dim;
    o.cells_per_block = dim == 2 ? 16 : 8;
    Simulation sim(o);
    for (int s = 0; s < 3; ++s) sim.step();  // a developed state with shocks
    sim.fill_guards();                       // a cycle fills them as it goes; the updates below run without one
    const auto p = sim.euler_params(0.5 * sim.stable_dt());
    const auto& g = sim.grid();
    // The interiors of the state set the updates write (p.next_state .. + 4), block by block.
    auto written = [&] {
      std::vector<double> out;
      auto d = g.data();
      for (const auto& m : g.blocks())
        for (int v = p.next_state; v < p.next_state + 5; ++v)
          for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
            for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
              for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k) out.push_back(d(m.id, v, i, j, k));
      return out;
    };
    for (int b = 0; b < g.n_blocks(); ++b) hydro_update_block(g, b, p);
    const std::vector<double> host = written();
    for (int b = 0; b < g.n_blocks(); ++b) hydro_update_block_per_cell(g, b, p);
    const std::vector<double> cell = written();
    INFO("dim " << dim);
    CHECK(host == cell);
    // The benchmark's plain device reference (device kernel, no runtime) gives the same bits too.
    auto all = g.data();  // forget the new state, so that the plain step must write all of it
    for (int b = 0; b < g.n_blocks(); ++b)
      for (int v = p.next_state; v < p.next_state + 5; ++v)
        Kokkos::deep_copy(Kokkos::subview(all, b, v, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL), 0.0);
    PlainDeviceStep plain(g);
    plain(p, true);
    const std::vector<double> device = written();
    CHECK(device == host);
  }
}

// Skipped in sanitizer builds: the 2-D order check and the 3-D Sod tube take the same paths.
TEST_CASE("hydro: smooth density wave converges at second order in 3D" * doctest::skip(korch::test::kSanitized)) {
  const double e1 = wave_l1(2, 8, 3, 0.1), e2 = wave_l1(2, 16, 3, 0.1);
  const double order = std::log2(e1 / e2);
  INFO("3D L1 errors " << e1 << " " << e2 << " order " << order);
  MESSAGE("3D wave L1 errors " << e1 << " (16^3) " << e2 << " (32^3), order " << order);
  CHECK(order >= 1.8);
}
