// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parts of the Euler scheme (euler.hpp) that code without Kokkos needs: the grid variables'
// layout, the stencil's guard cells and the slope limiters. korch-hydro's options (options.hpp)
// and their fuzz target use them.
#pragma once

namespace korch::hydro {

inline constexpr int n_cons = 5;   // rho, mx, my, mz, E
inline constexpr int var_new = 5;  // first variable of the other state set (see EulerParams::state)
inline constexpr int n_grid_vars = 10;
// The first variable of the state set that is not `set` (0 or var_new): the one a step writes.
inline constexpr int other_set(int set) { return set == 0 ? var_new : 0; }
inline constexpr int guard_cells = 2;
inline constexpr double pi = 3.14159265358979323846;

enum class Limiter : int { minmod = 0, mc = 1 };

// How device packets update their cells on CUDA and HIP builds (docs/benchmarks.md, "The device
// kernels"); the same bits every way. faces: one kernel per direction computes every face flux
// once into the packet's scratch, one more updates the cells from them; fused: one kernel, each
// cell computing its own 2 * dim face fluxes (twice the flux arithmetic, no flux memory); staged:
// one kernel first predicts every cell's half-step state and slopes once into scratch, then the
// face kernels read them (the flux arithmetic of faces without its repeated predictions).
enum class DeviceKernel : int { faces = 0, fused = 1, staged = 2 };

}  // namespace korch::hydro
