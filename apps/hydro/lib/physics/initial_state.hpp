// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The problems' initial states (--problem): Sedov's energy deposit, Sod's tubes along one axis,
// and a sound wave, written to both state sets of this rank's blocks.
#pragma once

#include "options.hpp"

#include <korch/grid.hpp>

#include <array>

namespace korch::hydro {

// Sets every cell (guard cells included) of `grid`'s blocks to the initial state of
// options.problem, from each cell's place in the whole grid (Sedov's deposit is counted over the
// whole grid, not only the blocks this rank holds).
void set_initial_state(Grid& grid, const Options& options);

// The conserved state (rho, mx, my, mz, E) at point x of the problems other than Sedov (Sod's
// tubes, the wave), whose states are functions of the point alone.
std::array<double, 5> conserved_initial_state(const Options& options, const double (&x)[3]);

}  // namespace korch::hydro
