// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A one-dimensional problem on korch-hydro's solver: a tube of cells along one axis, a few cells
// across, its blocks updated by the app's kernel (hydro_update_block, the update every
// configuration gives bitwise, test_hydro_solver.cpp) between guard-cell fills, with the app's
// time step (CFL number times the smallest cell_dt). The app's Simulation builds cubic grids only;
// the verification tests need the same problem along x, y and z (docs/hydro-verification.md).
#pragma once

#include "exact_riemann.hpp"
#include "simulation.hpp"

#include <korch/communicator.hpp>
#include <korch/decomposition.hpp>
#include <korch/error.hpp>
#include <korch/grid.hpp>
#include <korch/guard_cell_exchange.hpp>

#include <algorithm>
#include <array>
#include <limits>
#include <memory>
#include <vector>

namespace korch::hydro::testing {

class HydroTube {
 public:
  // `cells` along `axis` in `blocks_along` blocks, `width` cells across in every other direction
  // of a `dim`-dimensional grid, the same cell size everywhere; `along`: the boundaries at the
  // tube's ends (the sides are outflow, which keeps a state that is uniform across uniform).
  HydroTube(int axis, int cells, int blocks_along, int dim, BoundaryKind along, double gamma = 1.4, double cfl = 0.4,
            int width = 2)
      : axis_(axis), cells_(cells), gamma_(gamma), cfl_(cfl) {
    if (axis < 0 || axis >= dim || cells % blocks_along != 0)
      throw Error::format(
          "HydroTube: axis {} of a {}-D grid with {} cells in {} blocks: give an axis below dim and "
          "a cell count that the blocks divide",
          axis, dim, cells, blocks_along);
    const double dx = 1.0 / cells;
    GridSpec spec;
    spec.guard = guard_cells;
    spec.guard_dims = dim;
    spec.n_vars = n_grid_vars;
    for (int a = 0; a < 3; ++a) {
      const auto A = static_cast<std::size_t>(a);
      const int n = a == axis ? cells : (a < dim ? width : 1);
      spec.blocks[A] = a == axis ? blocks_along : 1;
      spec.block_cells[A] = n / spec.blocks[A];
      spec.domain_hi[A] = n * dx;
    }
    grid_ = std::make_unique<Grid>(spec);
    decomposition_ = std::make_unique<Decomposition>(spec.blocks, 1);
    std::array<BoundaryKind, 3> boundary{BoundaryKind::outflow, BoundaryKind::outflow, BoundaryKind::outflow};
    boundary[static_cast<std::size_t>(axis)] = along;
    exchange_ = std::make_unique<GuardCellExchange>(*grid_, *decomposition_, boundary, Communicator::world());
    params_.gamma = gamma;
    params_.dim = dim;
    for (int a = 0; a < 3; ++a) params_.dx[a] = grid_->block(0).delta[static_cast<std::size_t>(a)];
  }

  // Sets every cell (guard cells included) to initial(x) at its centre's coordinate x along the
  // axis; the velocity is along the axis.
  template <class Initial>
  void set(Initial initial) {
    auto data = grid_->data();
    for (const auto& m : grid_->blocks())
      for (int i = 0; i < static_cast<int>(data.extent(2)); ++i)
        for (int j = 0; j < static_cast<int>(data.extent(3)); ++j)
          for (int k = 0; k < static_cast<int>(data.extent(4)); ++k) {
            const int c[3] = {i, j, k};
            const auto A = static_cast<std::size_t>(axis_);
            const double x = m.lo_coord[A] + (c[axis_] - m.interior.lo[A] + 0.5) * m.delta[A];
            const Primitive1D w = initial(x);
            double U[5] = {w.rho, 0.0, 0.0, 0.0, w.p / (gamma_ - 1.0) + 0.5 * w.rho * w.u * w.u};
            U[1 + axis_] = w.rho * w.u;
            for (int v = 0; v < n_cons; ++v) data(m.id, v, i, j, k) = U[v];
          }
    params_.state = 0;
    params_.next_state = var_new;
    time_ = 0.0;
    steps_ = 0;
  }

  // Steps to time t, the last step shortened to end on it (what Simulation::step(dt_max) does).
  void run_to(double t) {
    while (time_ < t * (1 - 1e-12)) {
      exchange_->fill(params_.state, n_cons);
      params_.dt = std::min(cfl_ * smallest_cell_dt(), t - time_);
      for (int b = 0; b < grid_->n_blocks(); ++b) hydro_update_block(*grid_, b, params_);
      std::swap(params_.state, params_.next_state);
      time_ += params_.dt;
      ++steps_;
    }
  }

  double time() const noexcept { return time_; }
  int steps() const noexcept { return steps_; }
  double dx() const noexcept { return 1.0 / cells_; }

  // The density along the axis; throws when the cells across the tube differ (the problem was
  // meant to stay one-dimensional).
  std::vector<double> density() const {
    auto data = grid_->data();
    const auto A = static_cast<std::size_t>(axis_);
    std::vector<double> lo(static_cast<std::size_t>(cells_), std::numeric_limits<double>::infinity());
    std::vector<double> hi(lo.size(), -std::numeric_limits<double>::infinity());
    for (const auto& m : grid_->blocks())
      for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
        for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
          for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k) {
            const int c[3] = {i, j, k};
            const auto at =
                static_cast<std::size_t>(m.index[A] * grid_->spec().block_cells[A] + c[axis_] - m.interior.lo[A]);
            const double v = data(m.id, params_.state, i, j, k);
            lo[at] = std::min(lo[at], v);
            hi[at] = std::max(hi[at], v);
          }
    for (std::size_t at = 0; at < lo.size(); ++at)
      if (lo[at] != hi[at])
        throw Error::format("HydroTube: the density across the tube at cell {} along axis {} spans {} to {}", at, axis_,
                            lo[at], hi[at]);
    return lo;
  }

 private:
  double smallest_cell_dt() const {
    auto data = grid_->data();
    double m = std::numeric_limits<double>::infinity();
    for (const auto& b : grid_->blocks())
      for (int i = b.interior.lo[0]; i < b.interior.hi[0]; ++i)
        for (int j = b.interior.lo[1]; j < b.interior.hi[1]; ++j)
          for (int k = b.interior.lo[2]; k < b.interior.hi[2]; ++k) {
            double U[5];
            for (int v = 0; v < n_cons; ++v) U[v] = data(b.id, params_.state + v, i, j, k);
            m = std::min(m, cell_dt(U, params_));
          }
    if (!(m > 0) || !(m < std::numeric_limits<double>::infinity()))
      throw Error::format("HydroTube: time step {} at step {}: the state is no longer physical", m, steps_);
    return m;
  }

  int axis_;
  int cells_;
  double gamma_;
  double cfl_;
  std::unique_ptr<Grid> grid_;
  std::unique_ptr<Decomposition> decomposition_;
  std::unique_ptr<GuardCellExchange> exchange_;
  EulerParams params_;
  double time_ = 0.0;
  int steps_ = 0;
};

}  // namespace korch::hydro::testing
