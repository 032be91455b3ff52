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

// Cell centres and their distance from the domain's centre, on the grid's spacing.
struct Geometry {
  std::array<double, 3> d;
  int dim;

  double centre(const BlockMeta& m, int a, int i) const {
    const auto A = static_cast<std::size_t>(a);
    return m.lo_coord[A] + (i - m.interior.lo[A] + 0.5) * d[A];
  }
  double radius2(const BlockMeta& m, int i, int j, int k) const {
    double r2 = 0;
    const double x[3] = {centre(m, 0, i) - 0.5, centre(m, 1, j) - 0.5, dim == 3 ? centre(m, 2, k) - 0.5 : 0.0};
    for (double v : x) r2 += v * v;
    return r2;
  }
};

// Sedov's deposit: the number of cells whose centre is within r0 of the domain centre, over every
// block of the whole grid, not only this rank's. Their metadata as korch::Grid computes it (the
// same arithmetic, so the same cells count).
int deposit_cells(const Grid& grid, const Decomposition& decomposition, const Geometry& geo, double r0) {
  const GridSpec& spec = grid.spec();
  const BlockMeta& first = grid.block(0);
  int deposit = 0;
  for (int g = 0; g < decomposition.n_blocks(); ++g) {
    BlockMeta m = first;
    m.index = decomposition.index_of(g);
    for (int a = 0; a < 3; ++a) {
      const auto A = static_cast<std::size_t>(a);
      m.lo_coord[A] = spec.domain_lo[A] + m.index[A] * spec.block_cells[A] * m.delta[A];
    }
    for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
      for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
        for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k) deposit += geo.radius2(m, i, j, k) < r0 * r0;
  }
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

void set_initial_state(Grid& grid, const Decomposition& decomposition, const Options& o) {
  const double g = o.gamma;
  const Geometry geo{grid.block(0).delta, o.dim};
  const auto& d = geo.d;
  auto data = grid.data();
  // Sedov: energy E0 = 1 (per unit length in 2D) in the cells whose centre is within r0 of the
  // domain centre (a cell corner, so the set is symmetric under every reflection of the quadrants).
  const double r0 = 3.5 * d[0];
  const int deposit = o.problem == Problem::sedov ? deposit_cells(grid, decomposition, geo, r0) : 0;
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
