// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A plain Kokkos hydro step over a whole grid kept in device memory, written the way AthenaK writes
// its hydro (docs/benchmarks.md, "The plain resident step"): one kernel fills every block's guard
// cells, one kernel per direction computes every face flux of every block once, one kernel updates
// every cell of every block, and one reduction gives the next time step. No per-block launch, no
// runtime, no copy to the host: the reference korch-bench-hydro sets beside the device
// configurations. It uses the solver's own face arithmetic (EulerKernel::low_face_flux), so a step
// gives the bits of the fused kernel korch runs.
#pragma once

#include "euler.hpp"

#include <korch/backend/spaces.hpp>
#include <korch/grid.hpp>
#include <korch/guard_cell_boundary.hpp>

#include <Kokkos_Core.hpp>

#include <array>

namespace korch::hydro {

class PlainResidentStep {
 public:
  // Copies `grid`'s cells to device memory. The grid must hold every block (one rank) and guard
  // cells along the first `dim` directions; throws korch::Error otherwise.
  PlainResidentStep(const Grid& grid, std::array<BoundaryKind, 3> boundary);

  // The state the next step reads: variables [state(), state() + 5).
  int state() const noexcept { return state_; }
  // The smallest stable dt of the current state's cells (cell_dt; a device reduction), taking
  // the gamma, cell sizes and dimension of `params`.
  double stable_dt(const EulerParams& params) const;
  // Fills the current state's guard cells.
  void fill_guards() const;
  // Fluxes and update with `params` (gamma, dt, cell sizes, dimension, limiter; its state indices
  // are replaced by this object's), into the other state set, which then becomes the current one.
  void update(const EulerParams& params);
  // The device cells, back in a grid of the same spec (for checks).
  void copy_to(Grid& grid) const;

 private:
  using Cells = Kokkos::View<double*****, Kokkos::LayoutRight, DeviceMemSpace>;
  using Faces = Kokkos::View<double*****, Kokkos::LayoutRight, DeviceMemSpace>;

  Cells cells_;    // (block, var, i, j, k), the grid's layout
  Faces flux_[3];  // per direction: (block, var, face i, j, k)
  std::array<int, 3> blocks_{1, 1, 1}, interior_{1, 1, 1}, guard_{0, 0, 0};
  std::array<BoundaryKind, 3> boundary_;
  int dim_ = 1;
  int state_ = 0;
};

}  // namespace korch::hydro
