// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host version of the hydro update of a box: the arithmetic of EulerKernel (euler.hpp), each
// quantity computed once per cell or face in phases over contiguous rows
// (docs/hydro-verification.md, "The host sweep").
#pragma once

#include "euler.hpp"
#include "host_cells.hpp"

namespace korch::hydro {

// The update of the box [lo, hi) of a block's views `vars` (state p.state read, p.next_state
// written), bitwise the same as EulerKernel run on every cell of the box.
void update_box_host(const HostVar (&vars)[n_grid_vars], const EulerParams& p, const int lo[3], const int hi[3]);

}  // namespace korch::hydro
