// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro app's host view of the grid, shared by its sources: one variable of one block as an
// unmanaged 3-D host View, the walk over every interior cell with its global index, and the
// choice of host space for the work between cycles.
#pragma once

#include "euler.hpp"

#include <korch/backend/kokkos_compat.hpp>
#include <korch/grid.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace korch::hydro {

using HostVar =
    Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

inline HostVar host_var(const Grid& grid, int block, int var) {
  const auto e = grid.stored_extent();
  const std::size_t n =
      static_cast<std::size_t>(e[0]) * static_cast<std::size_t>(e[1]) * static_cast<std::size_t>(e[2]);
  return HostVar(grid.block_pointer(block) + static_cast<std::size_t>(var) * n, e[0], e[1], e[2]);
}

// The work between cycles runs on the main thread: on Kokkos::Serial by default (a one-thread OpenMP
// instance where Kokkos has no Serial: compat::calling_thread_instance), or on the backend's
// host space (OpenMP on the openmp build) with Options::host_parallel. Why not OpenMP always: after
// a parallel region libgomp's workers spin-wait (unless OMP_WAIT_POLICY=passive) on the cores the
// runtime's team threads need; on a 2-core machine that made a step of the openmp build ~20x slower.
// Calls f(block, i, j, k, c) for every interior cell of the grid, c being the cell's index in the
// global x-fastest array of all interior cells (what gather() returns and the conduction solve uses).
template <class F>
void for_each_interior_cell(const Grid& grid, F&& f) {
  const auto& spec = grid.spec();
  std::size_t n[3];
  for (int d = 0; d < 3; ++d)
    n[d] = static_cast<std::size_t>(spec.block_cells[d]) * static_cast<std::size_t>(spec.blocks[d]);
  for (const auto& m : grid.blocks())
    for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
      for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
        for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k) {
          const std::size_t g[3] = {static_cast<std::size_t>(m.index[0] * spec.block_cells[0] + i - m.interior.lo[0]),
                                    static_cast<std::size_t>(m.index[1] * spec.block_cells[1] + j - m.interior.lo[1]),
                                    static_cast<std::size_t>(m.index[2] * spec.block_cells[2] + k - m.interior.lo[2])};
          f(m.id, i, j, k, g[0] + n[0] * (g[1] + n[1] * g[2]));
        }
}

template <class F>
void on_host_space(bool parallel, F&& f) {
  if (parallel)
    f(Kokkos::DefaultHostExecutionSpace());
  else
    f(compat::calling_thread_instance());
}

}  // namespace korch::hydro
