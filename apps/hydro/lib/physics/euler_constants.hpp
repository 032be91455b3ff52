// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parts of the Euler scheme (euler.hpp) that code without Kokkos needs: the grid variables'
// layout, the stencil's guard cells and the slope limiters. korch-hydro's options (options.hpp)
// and their fuzz target use them.
#pragma once

namespace korch::hydro {

inline constexpr int n_cons = 5;   // rho, mx, my, mz, E
inline constexpr int var_new = 5;  // first variable of the other state set (see EulerParams::state)
inline constexpr int n_grid_vars = 10;
inline constexpr int guard_cells = 2;

enum class Limiter : int { minmod = 0, mc = 1 };

}  // namespace korch::hydro
