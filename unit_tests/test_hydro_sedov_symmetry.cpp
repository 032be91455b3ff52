// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Sedov blast must be as round along the grid's axes as along its diagonals: the odd-even
// decoupling of HLLC at strong grid-aligned shocks (the carbuncle) shows as density spikes and a
// channel behind the shock where it crosses the axes. Compares the density behind the shock along
// an axis with the density along the diagonal at the same radii, in 2D and 3D.
#include "simulation.hpp"
#include "test_sanitized.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace korch::hydro;

namespace {

struct Profile {
  std::vector<double> r, rho;
};

// Density against radius from the domain centre along +x (the row and layer next to the centre)
// and along the diagonal (cells (i, i[, i]) above the centre).
void profiles(const Simulation& sim, Profile& axis, Profile& diagonal) {
  const auto n = sim.global_cells();
  const auto dx = sim.dx();
  const int dim = sim.options().dim;
  const std::vector<double> rho = sim.gather(0);
  auto at = [&](int i, int j, int k) {
    return rho[static_cast<std::size_t>(i) +
               static_cast<std::size_t>(n[0]) *
                   (static_cast<std::size_t>(j) + static_cast<std::size_t>(n[1]) * static_cast<std::size_t>(k))];
  };
  auto radius = [&](int i, int j, int k) {
    const double x = (i + 0.5) * dx[0] - 0.5, y = (j + 0.5) * dx[1] - 0.5, z = dim == 3 ? (k + 0.5) * dx[2] - 0.5 : 0.0;
    return std::sqrt(x * x + y * y + z * z);
  };
  const int h = n[0] / 2, kz = dim == 3 ? h : 0;
  for (int i = h; i < n[0]; ++i) {
    axis.r.push_back(radius(i, h, kz));
    axis.rho.push_back(at(i, h, kz));
    diagonal.r.push_back(radius(i, i, dim == 3 ? i : 0));
    diagonal.rho.push_back(at(i, i, dim == 3 ? i : 0));
  }
}

double interpolate(const Profile& p, double r) {
  for (std::size_t c = 1; c < p.r.size(); ++c)
    if (p.r[c] >= r) {
      const double w = (r - p.r[c - 1]) / (p.r[c] - p.r[c - 1]);
      return (1 - w) * p.rho[c - 1] + w * p.rho[c];
    }
  return p.rho.back();
}

// Largest relative difference between the diagonal's density and the axis' at the same radius,
// over radii from 0.6 to 0.95 of the shock radius (where the axis' density peaks).
double axis_asymmetry(int dim, int blocks, int cells, double tmax, double& shock_radius) {
  Options o;
  o.problem = Problem::sedov;
  o.dim = dim;
  o.blocks = blocks;
  o.cells_per_block = cells;
  o.tmax = tmax;
  o.threads = 2;
  o.quiet = true;
  o.write_output = false;
  Simulation sim(o);
  sim.run();
  Profile axis, diagonal;
  profiles(sim, axis, diagonal);
  const auto peak = std::max_element(axis.rho.begin(), axis.rho.end()) - axis.rho.begin();
  shock_radius = axis.r[static_cast<std::size_t>(peak)];
  double worst = 0;
  for (std::size_t c = 0; c < diagonal.r.size(); ++c) {
    const double r = diagonal.r[c];
    if (r < 0.6 * shock_radius || r > 0.95 * shock_radius) continue;
    const double a = interpolate(axis, r);
    worst = std::max(worst, std::abs(diagonal.rho[c] - a) / a);
  }
  return worst;
}

}  // namespace

TEST_CASE("hydro: Sedov 2D is as dense along the axis as along the diagonal behind the shock (no carbuncle)") {
  double radius = 0;
  const double d = axis_asymmetry(2, 4, 32, 0.05, radius);
  MESSAGE("2D 128^2: shock radius " << radius << ", largest relative density difference axis/diagonal " << d);
  // HLLC everywhere gives 0.36 here (the axis' spikes and channel), HLLE at strong shocks 0.23;
  // the rest is the coarse grid's own anisotropy.
  CHECK(d < 0.28);
}

// Physics alone, and two minutes of a sanitizer build's suites: the 2-D case runs the same solver and
// runtime paths, and other suites the 3-D ones.
TEST_CASE("hydro: Sedov 3D is as dense along the axis as along the diagonal behind the shock (no carbuncle)" *
          doctest::skip(korch::test::kSanitized)) {
  double radius = 0;
  const double d = axis_asymmetry(3, 4, 12, 0.05, radius);
  MESSAGE("3D 48^3: shock radius " << radius << ", largest relative density difference axis/diagonal " << d);
  // HLLC everywhere: 0.82; HLLE at strong shocks: 0.37.
  CHECK(d < 0.45);
}
