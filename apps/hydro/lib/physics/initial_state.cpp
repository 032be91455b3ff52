// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The problems' initial states (see initial_state.hpp).
#include "initial_state.hpp"

#include "euler_constants.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <vector>

namespace korch::hydro {

namespace {

// Cell centres and their distance from the domain's centre. A centre is computed from the cell's
// index in the whole grid, so a cell has the same coordinates, to the bit, whatever the size of
// the blocks it is cut into (and runs in any blocks give the same state hash).
struct Geometry {
  std::array<double, 3> lo;
  std::array<double, 3> d;
  std::array<int, 3> block_cells;
  int dim;

  explicit Geometry(const Grid& grid, int dimensions)
      : lo(grid.spec().domain_lo), d(grid.block(0).delta), block_cells(grid.spec().block_cells), dim(dimensions) {}

  double centre_of(int a, int global_cell) const {
    const auto A = static_cast<std::size_t>(a);
    return lo[A] + (global_cell + 0.5) * d[A];
  }
  // Block m's cell i along a (block-local, guard cells included).
  double centre(const BlockMeta& m, int a, int i) const {
    const auto A = static_cast<std::size_t>(a);
    return centre_of(a, m.index[A] * block_cells[A] + i - m.interior.lo[A]);
  }
  double radius2(const double (&x)[3]) const {
    const double r[3] = {x[0] - 0.5, x[1] - 0.5, dim == 3 ? x[2] - 0.5 : 0.0};
    return r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
  }
  double radius2(const BlockMeta& m, int i, int j, int k) const {
    return radius2({centre(m, 0, i), centre(m, 1, j), centre(m, 2, k)});
  }
};

// Sedov's deposit: the number of cells of the whole grid (not only this rank's blocks) whose
// centre is within r0 of the domain centre.
int deposit_cells(const Grid& grid, const Geometry& geo, double r0) {
  const GridSpec& spec = grid.spec();
  int n[3];
  for (int a = 0; a < 3; ++a)
    n[a] = spec.blocks[static_cast<std::size_t>(a)] * spec.block_cells[static_cast<std::size_t>(a)];
  int deposit = 0;
  for (int i = 0; i < n[0]; ++i)
    for (int j = 0; j < n[1]; ++j)
      for (int k = 0; k < n[2]; ++k)
        deposit += geo.radius2({geo.centre_of(0, i), geo.centre_of(1, j), geo.centre_of(2, k)}) < r0 * r0;
  return deposit;
}

// The primitive state of one cell (density, velocity, pressure) at x.
struct Primitive {
  double rho = 1.0, u[3] = {0, 0, 0}, p = 1.0;
};

Primitive tube_or_wave(const Options& o, const double (&x)[3]) {
  Primitive s;
  if (o.problem == Problem::wave) {
    const double vel[3] = {1.0, 0.5, 0.25};
    double phase = x[0] + x[1] + (o.dim == 3 ? x[2] : 0.0);
    s.rho = 1.0 + 0.2 * std::sin(2.0 * pi * phase);
    for (int a = 0; a < o.dim; ++a) s.u[a] = vel[a];
    return s;
  }
  const int a = o.problem == Problem::sod_x ? 0 : (o.problem == Problem::sod_y ? 1 : 2);
  if (x[a] >= 0.5) {
    s.rho = 0.125;
    s.p = 0.1;
  }
  return s;
}

}  // namespace

std::array<double, 5> conserved_initial_state(const Options& o, const double (&x)[3]) {
  const Primitive s = tube_or_wave(o, x);
  const double E = s.p / (o.gamma - 1.0) + 0.5 * s.rho * (s.u[0] * s.u[0] + s.u[1] * s.u[1] + s.u[2] * s.u[2]);
  return {s.rho, s.rho * s.u[0], s.rho * s.u[1], s.rho * s.u[2], E};
}

void set_initial_state(Grid& grid, const Options& o) {
  const double g = o.gamma;
  const Geometry geo(grid, o.dim);
  const auto& d = geo.d;
  auto data = grid.data();
  // Sedov: energy E0 = 1 (per unit length in 2D) in the cells whose centre is within r0 of the
  // domain centre (a cell corner, so the set is symmetric under every reflection of the quadrants).
  const double r0 = 3.5 * d[0];
  const int deposit = o.problem == Problem::sedov ? deposit_cells(grid, geo, r0) : 0;
  const double cell_volume = d[0] * d[1] * (o.dim == 3 ? d[2] : 1.0);
  for (const auto& m : grid.blocks()) {
    for (int i = 0; i < static_cast<int>(data.extent(2)); ++i)
      for (int j = 0; j < static_cast<int>(data.extent(3)); ++j)
        for (int k = 0; k < static_cast<int>(data.extent(4)); ++k) {
          Primitive s;
          if (o.problem == Problem::sedov) {
            s.p = 1e-5;
            if (geo.radius2(m, i, j, k) < r0 * r0) s.p = (g - 1.0) * 1.0 / (deposit * cell_volume);
          } else {
            const double x[3] = {geo.centre(m, 0, i), geo.centre(m, 1, j), geo.centre(m, 2, k)};
            s = tube_or_wave(o, x);
          }
          const double E = s.p / (g - 1.0) + 0.5 * s.rho * (s.u[0] * s.u[0] + s.u[1] * s.u[1] + s.u[2] * s.u[2]);
          const double U[5] = {s.rho, s.rho * s.u[0], s.rho * s.u[1], s.rho * s.u[2], E};
          for (int v = 0; v < n_cons; ++v) {
            data(m.id, v, i, j, k) = U[v];
            data(m.id, var_new + v, i, j, k) = U[v];
          }
        }
  }
}

}  // namespace korch::hydro
