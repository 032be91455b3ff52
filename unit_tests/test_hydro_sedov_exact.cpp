// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Sedov-Taylor blast of korch-hydro against the exact similarity solution
// (docs/hydro-verification.md, "Sedov-Taylor").
#include "sedov_exact.hpp"
#include "simulation.hpp"
#include "test_sanitized.hpp"

#include <korch/error.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <vector>

using namespace korch::hydro;

namespace {

constexpr double kPi = 3.14159265358979323846;

struct BlastFigures {
  int cells = 0;              // per direction
  double shock_radius = 0.0;  // the radius the moved mass's first moment implies
  double exact_radius = 0.0;
  double l1 = 0.0;  // mean |rho - exact rho| over the cells
  int steps = 0;
  double seconds = 0.0;
};

// The app's Sedov problem (energy 1 in gas of density 1, centred in the unit box) to time tmax.
BlastFigures run_blast(int dim, int blocks, int cells_per_block, double tmax) {
  Options o;
  o.problem = Problem::sedov;
  o.dim = dim;
  o.blocks = blocks;
  o.cells_per_block = cells_per_block;
  o.threads = 2;
  o.quiet = true;
  o.write_output = false;
  const auto start = std::chrono::steady_clock::now();
  Simulation sim(o);
  while (sim.time() < tmax * (1 - 1e-12)) sim.step(tmax - sim.time());
  BlastFigures out;
  out.cells = blocks * cells_per_block;
  out.steps = sim.steps_done();
  const SedovSolution exact(o.gamma, dim);
  out.exact_radius = exact.shock_radius(1.0, 1.0, sim.time());
  const auto n = sim.global_cells();
  const double dx = sim.dx()[0];
  const double volume = dim == 3 ? dx * dx * dx : dx * dx;
  const auto rho = sim.gather(0);
  double err = 0.0, moment = 0.0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) {
        const double x = (i + 0.5) * dx - 0.5, y = (j + 0.5) * dx - 0.5, z = dim == 3 ? (k + 0.5) * dx - 0.5 : 0.0;
        const double r = std::sqrt(x * x + y * y + z * z);
        const double v = rho[static_cast<std::size_t>(i + n[0] * (j + n[1] * k))];
        err += std::fabs(v - exact.at(r, 1.0, 1.0, sim.time()).rho);
        moment += (v - 1.0) * r * volume;
      }
  out.l1 = err / static_cast<double>(rho.size());
  // The exact moment is area * R^(dim+1) * moved_mass_moment(1): solved for R. Cell averages give
  // the moment to second order however the shock is smeared, where the density peak or the
  // steepest drop sit half a cell or more off the shock.
  const double area = dim == 2 ? 2.0 * kPi : 4.0 * kPi;
  out.shock_radius = std::pow(moment / (area * exact.moved_mass_moment(1)), 1.0 / (dim + 1));
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("sedov " << dim << "D " << out.cells << " cells/direction, t " << sim.time() << ": shock radius "
                   << out.shock_radius << " (exact " << out.exact_radius << ", relative "
                   << out.shock_radius / out.exact_radius - 1.0 << "), L1(rho) " << out.l1 << ", " << out.steps
                   << " steps, " << out.seconds << " s");
  return out;
}

}  // namespace

TEST_CASE(
    "Sedov exact solution: its energy constant matches the published ones for gamma 1.4; bad arguments are named") {
  // Kamm and Timmes (LA-UR-07-2849): 0.851072 (sphere), 0.984041 (cylinder; ours is 3.4e-5 above,
  // a difference ten times steps do not move: docs/hydro-verification.md).
  CHECK(SedovSolution(1.4, 3).alpha() == doctest::Approx(0.851072).epsilon(2e-6));
  CHECK(SedovSolution(1.4, 2).alpha() == doctest::Approx(0.984041).epsilon(1e-4));
  CHECK_THROWS_WITH_AS(SedovSolution(1.0, 3), doctest::Contains("gamma"), korch::Error);
  CHECK_THROWS_WITH_AS(SedovSolution(1.4, 1), doctest::Contains("dim"), korch::Error);
  const SedovSolution s(1.4, 2);
  CHECK_THROWS_WITH_AS(s.shock_radius(1.0, 1.0, 0.0), doctest::Contains("time 0"), korch::Error);
  CHECK_THROWS_WITH_AS(s.at(-0.1, 1.0, 1.0, 0.05), doctest::Contains("radius -0.1"), korch::Error);
  CHECK_THROWS_WITH_AS(s.moved_mass_moment(-1), doctest::Contains("moment -1"), korch::Error);
}

TEST_CASE("Sedov exact solution: the strong-shock jump behind the shock and the mass the blast swept") {
  for (int dim : {2, 3}) {
    const SedovSolution s(1.4, dim);
    const double t = 0.05, R = s.shock_radius(1.0, 1.0, t), speed = 2.0 / (dim + 2.0) * R / t;
    const RadialState behind = s.at(R * (1 - 1e-12), 1.0, 1.0, t);
    CHECK(behind.rho == doctest::Approx(6.0).epsilon(1e-9));  // (gamma + 1) / (gamma - 1)
    CHECK(behind.u == doctest::Approx(speed / 1.2).epsilon(1e-9));
    CHECK(behind.p == doctest::Approx(speed * speed / 1.2).epsilon(1e-9));
    CHECK(s.at(R * (1 + 1e-9), 1.0, 1.0, t).rho == 1.0);
    // The gas inside the shock is the gas that was there: moved_mass_moment(0) = 0, here measured
    // against the mass it is the difference of (integral of lambda^(dim-1) = 1 / dim).
    INFO("dim " << dim);
    CHECK(std::fabs(s.moved_mass_moment(0)) <= 1e-8 / dim);
  }
}

// The two convergence checks are physics at growing resolution: skipped in sanitizer builds, where
// the Sedov runs of test_hydro_sedov_symmetry.cpp and test_hydro_amr.cpp take the same paths.
TEST_CASE("Sedov 2D: the shock radius is within 1 % of the exact one and L1(rho) falls with resolution" *
          doctest::skip(korch::test::kSanitized)) {
  const BlastFigures coarse = run_blast(2, 4, 8, 0.05), mid = run_blast(2, 4, 16, 0.05),
                     fine = run_blast(2, 4, 32, 0.05);
  CHECK(std::fabs(mid.shock_radius / mid.exact_radius - 1.0) <= 0.01);
  CHECK(std::fabs(fine.shock_radius / fine.exact_radius - 1.0) <= 0.01);
  // First order at the shock: the error at least a fifth smaller per doubling (measured 0.73, 0.67).
  CHECK(mid.l1 <= 0.8 * coarse.l1);
  CHECK(fine.l1 <= 0.8 * mid.l1);
}

TEST_CASE("Sedov 3D: the shock radius is within 1 % of the exact one and L1(rho) falls with resolution" *
          doctest::skip(korch::test::kSanitized)) {
  const BlastFigures coarse = run_blast(3, 2, 8, 0.05), fine = run_blast(3, 2, 16, 0.05);
  CHECK(std::fabs(fine.shock_radius / fine.exact_radius - 1.0) <= 0.01);
  CHECK(fine.l1 <= 0.8 * coarse.l1);  // measured 0.53
}
