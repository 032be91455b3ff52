// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Sedov blast (2D or 3D) on an adaptive mesh (korch-hydro --max-level) against the uniform grid of its
// finest level, both by korch-hydro's solver on cpu_only in this process, alternated over rounds
// (uniform first):
//   korch-bench-hydro_amr [--roots 2] [--cells-per-block 24] [--max-level 3] [--tmax 0.05] [--rounds 1]
//                         [--limiter mc]
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

// L1(rho) and the shock radius on the finest level's lattice of the unit square or cube at time t:
// each cell added covers f^dim finest cells from finest cell `first` (f = 1 on the uniform grid), and
// each finest cell is compared with the exact solution at its own centre.
class FinestLattice {
 public:
  FinestLattice(int dim, int n, double t) : exact_(1.4, dim), dim_(dim), n_(n), t_(t) {}

  void add(double rho, const std::array<std::int64_t, 3>& first, std::int64_t f) {
    const double dx = 1.0 / n_, volume = std::pow(dx, dim_);
    const auto centre = [&](std::int64_t c) { return (static_cast<double>(c) + 0.5) * dx - 0.5; };
    for (std::int64_t k = 0; k < (dim_ == 3 ? f : 1); ++k)
      for (std::int64_t j = 0; j < f; ++j)
        for (std::int64_t i = 0; i < f; ++i) {
          const double x = centre(first[0] + i), y = centre(first[1] + j), z = dim_ == 3 ? centre(first[2] + k) : 0.0;
          const double r = std::sqrt(x * x + y * y + z * z);
          err_ += std::fabs(rho - exact_.at(r, 1.0, 1.0, t_).rho);
          moment_ += (rho - 1.0) * r * volume;
          ++cells_;
        }
  }
  // The moved mass's first moment is (2 pi or 4 pi) R^(dim + 1) times the exact profile's moment.
  void finish(Figures& f) const {
    const double surface = dim_ == 3 ? 4.0 * kPi : 2.0 * kPi;
    f.l1 = err_ / static_cast<double>(cells_);
    f.radius = std::pow(moment_ / (surface * exact_.moved_mass_moment(1)), 1.0 / (dim_ + 1));
    f.exact_radius = exact_.shock_radius(1.0, 1.0, t_);
    f.time = t_;
  }

 private:
  SedovSolution exact_;
  int dim_, n_;
  double t_, err_ = 0, moment_ = 0;
  std::int64_t cells_ = 0;
};

int finest_cells(const korch::bench::HydroAmrBenchArgs& a) { return a.roots * (a.cells_per_block << a.max_level); }

Options base(const korch::bench::HydroAmrBenchArgs& a) {
  Options o;
  o.problem = korch::hydro::Problem::sedov;
  o.dim = a.dim;
  o.threads = static_cast<unsigned>(a.threads);
  o.tmax = a.tmax;
  o.quiet = true;
  o.write_output = false;
  o.limiter = a.limiter == "minmod" ? korch::hydro::Limiter::minmod : korch::hydro::Limiter::mc;
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
  f.cell_updates = static_cast<double>(f.steps) * n[0] * n[1] * n[2];
  const std::vector<double> rho = sim.gather(0);
  FinestLattice lattice(a.dim, n[0], sim.time());
  for (std::int64_t k = 0; k < n[2]; ++k)
    for (std::int64_t j = 0; j < n[1]; ++j)
      for (std::int64_t i = 0; i < n[0]; ++i)
        lattice.add(rho[static_cast<std::size_t>(i + n[0] * (j + n[1] * k))], {i, j, k}, 1);
  lattice.finish(f);
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
  // Each leaf's cells over the finest cells they cover (one process: every leaf is this rank's).
  const korch::ForestMesh& mesh = sim.mesh();
  const auto& s = mesh.shape();
  FinestLattice lattice(a.dim, finest_cells(a), sim.time());
  for (int b = 0; b < static_cast<int>(mesh.own_leaves().size()); ++b) {
    const korch::BlockKey& leaf = mesh.own_leaves()[static_cast<std::size_t>(b)];
    const korch::BlockArray& u = mesh.array(b);
    const std::int64_t fine = std::int64_t{1} << (a.max_level - leaf.level);
    for (int k = 0; k < s.cells[2]; ++k)
      for (int j = 0; j < s.cells[1]; ++j)
        for (int i = 0; i < s.cells[0]; ++i) {
          const double rho = u.data[sim.state() * u.stride[0] + (i + s.guard[0]) * u.stride[1] +
                                    (j + s.guard[1]) * u.stride[2] + (k + s.guard[2]) * u.stride[3]];
          const int c[3] = {i, j, k};
          std::array<std::int64_t, 3> first{};
          for (int d = 0; d < 3; ++d) first[d] = (leaf.position[d] * s.cells[d] + c[d]) * fine;
          lattice.add(rho, first, fine);
        }
  }
  lattice.finish(f);
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
  const int finest = finest_cells(a);
  if (finest % a.uniform_cells_per_block != 0)
    throw korch::cli::UsageError("option --uniform-cells-per-block: " + std::to_string(a.uniform_cells_per_block) +
                                 " does not divide the finest level's " + std::to_string(finest) +
                                 " cells per direction");
  std::printf(
      "korch-bench-hydro_amr: Sedov %dD to t = %g; uniform %d^%d cells (%d^%d blocks of %d^%d) against %d^%d "
      "root blocks of %d^%d cells with %d levels above them (regrid every %d steps); %s limiter; %d threads per "
      "team\n",
      a.dim, a.tmax, finest, a.dim, finest / a.uniform_cells_per_block, a.dim, a.uniform_cells_per_block, a.dim,
      a.roots, a.dim, a.cells_per_block, a.dim, a.max_level, a.regrid_every, a.limiter.c_str(), a.threads);
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
