// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The 2D Sedov blast on an adaptive mesh (korch-hydro --max-level) against the uniform grid of its
// finest level, both by korch-hydro's solver on cpu_only in this process, alternated over rounds
// (uniform first):
//   korch-bench-hydro_amr [--roots 2] [--cells-per-block 24] [--max-level 3] [--tmax 0.05] [--rounds 1]
// For each: the density's L1 error against the exact solution (sedov_exact.hpp) over the finest
// level's cells, the shock radius that the moved mass's first moment implies against the exact one
// (docs/hydro-verification.md, "Sedov-Taylor"), the steps, the cell updates and the wall time. Then
// the ratios adaptive / uniform: L1 error, cell updates, wall time, and cell updates per second,
// per round and (several rounds) their medians.
// The machine's load (/proc/loadavg) is printed before and after.
#include "bench_command_lines.hpp"
#include "bench_timing.hpp"

#include "amr_simulation.hpp"
#include "sedov_exact.hpp"
#include "simulation.hpp"

#include <korch/cli/program.hpp>
#include <korch/error.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

using korch::bench::Clock;
using korch::bench::seconds_since;
using korch::hydro::AmrSimulation;
using korch::hydro::Options;
using korch::hydro::SedovSolution;
using korch::hydro::Simulation;

constexpr double kPi = 3.14159265358979323846;

using korch::bench::load_average;

struct Figures {
  double l1 = 0, radius = 0, exact_radius = 0, cell_updates = 0, seconds = 0, time = 0;
  int steps = 0;
};

// L1(rho) and the shock radius of a density field on an n x n lattice of the unit square at time t.
void measure(const std::vector<double>& rho, int n, double t, Figures& f) {
  const SedovSolution exact(1.4, 2);
  const double dx = 1.0 / n;
  double err = 0, moment = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const double x = (i + 0.5) * dx - 0.5, y = (j + 0.5) * dx - 0.5, r = std::sqrt(x * x + y * y);
      const double v = rho[static_cast<std::size_t>(i + n * j)];
      err += std::fabs(v - exact.at(r, 1.0, 1.0, t).rho);
      moment += (v - 1.0) * r * dx * dx;
    }
  f.l1 = err / static_cast<double>(rho.size());
  f.radius = std::pow(moment / (2.0 * kPi * exact.moved_mass_moment(1)), 1.0 / 3.0);
  f.exact_radius = exact.shock_radius(1.0, 1.0, t);
  f.time = t;
}

Options base(const korch::bench::HydroAmrBenchArgs& a) {
  Options o;
  o.problem = korch::hydro::Problem::sedov;
  o.dim = 2;
  o.threads = static_cast<unsigned>(a.threads);
  o.tmax = a.tmax;
  o.quiet = true;
  o.write_output = false;
  return o;
}

Figures uniform_run(const korch::bench::HydroAmrBenchArgs& a) {
  Options o = base(a);
  o.cells_per_block = a.uniform_cells_per_block;
  o.blocks = a.roots * (a.cells_per_block << a.max_level) / a.uniform_cells_per_block;
  const auto t0 = Clock::now();
  Simulation sim(o);
  sim.run();
  Figures f;
  f.seconds = seconds_since(t0);
  f.steps = sim.steps_done();
  const auto n = sim.global_cells();
  f.cell_updates = static_cast<double>(f.steps) * n[0] * n[1];
  measure(sim.gather(0), n[0], sim.time(), f);
  return f;
}

Figures adaptive_run(const korch::bench::HydroAmrBenchArgs& a) {
  Options o = base(a);
  o.blocks = a.roots;
  o.cells_per_block = a.cells_per_block;
  o.max_level = a.max_level;
  o.regrid_every = a.regrid_every;
  const auto t0 = Clock::now();
  AmrSimulation sim(o);
  sim.run();
  Figures f;
  f.seconds = seconds_since(t0);
  f.steps = sim.steps_done();
  f.cell_updates = sim.cell_updates();
  measure(sim.density_on_finest_lattice(), a.roots * (a.cells_per_block << a.max_level), sim.time(), f);
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void print(const char* name, const Figures& f) {
  std::printf("  %-9s %6d steps  L1(rho) %.4e  shock radius %.5f (exact %.5f, %+.2f %%)  %.4g cell updates  %.2f s\n",
              name, f.steps, f.l1, f.radius, f.exact_radius, 100.0 * (f.radius / f.exact_radius - 1.0), f.cell_updates,
              f.seconds);
}

int run(const korch::bench::HydroAmrBenchArgs& a) {
  if (a.cells_per_block % 2 != 0)
    throw korch::cli::UsageError("option --cells-per-block: " + std::to_string(a.cells_per_block) +
                                 " is odd: a refined block halves its cells");
  const int finest = a.roots * (a.cells_per_block << a.max_level);
  if (finest % a.uniform_cells_per_block != 0)
    throw korch::cli::UsageError("option --uniform-cells-per-block: " + std::to_string(a.uniform_cells_per_block) +
                                 " does not divide the finest level's " + std::to_string(finest) +
                                 " cells per direction");
  std::printf(
      "korch-bench-hydro_amr: Sedov 2D to t = %g; uniform %d^2 cells (%d^2 blocks of %d^2) against %d^2 root "
      "blocks of %d^2 cells with %d levels above them (regrid every %d steps); %d threads per team\n",
      a.tmax, finest, finest / a.uniform_cells_per_block, a.uniform_cells_per_block, a.roots, a.cells_per_block,
      a.max_level, a.regrid_every, a.threads);
  std::printf("  load before: %s\n", load_average().c_str());
  std::vector<double> wall, rate;
  for (int round = 0; round < a.rounds; ++round) {
    const Figures uniform = uniform_run(a);
    const Figures adaptive = adaptive_run(a);
    if (a.rounds > 1) std::printf("  round %d (load %s)\n", round + 1, load_average().c_str());
    print("uniform", uniform);
    print("adaptive", adaptive);
    wall.push_back(adaptive.seconds / uniform.seconds);
    rate.push_back((adaptive.cell_updates / adaptive.seconds) / (uniform.cell_updates / uniform.seconds));
    std::printf(
        "  adaptive / uniform: L1(rho) %.3f (goal <= 1.2), cell updates %.3f (goal <= 0.35), wall time %.3f, "
        "cell updates per second %.3f (goal >= 0.85)\n",
        adaptive.l1 / uniform.l1, adaptive.cell_updates / uniform.cell_updates, wall.back(), rate.back());
  }
  if (a.rounds > 1)
    std::printf("  median over %d rounds: wall time %.3f, cell updates per second %.3f\n", a.rounds, median(wall),
                median(rate));
  std::printf("  load after: %s\n", load_average().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  korch::bench::HydroAmrBenchArgs args;
  const auto command_line = korch::bench::hydro_amr_bench_command_line(args);
  korch::cli::Program& program = *command_line;
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(args);
  });
}
