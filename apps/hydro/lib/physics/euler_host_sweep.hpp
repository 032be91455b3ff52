// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host version of the hydro update of a box: the arithmetic of EulerKernel (euler.hpp), each
// quantity computed once per cell or face in phases over contiguous rows
// (docs/hydro-verification.md, "The host sweep").
#pragma once

#include "euler.hpp"
#include "host_cells.hpp"

namespace korch::hydro {

// Where the sweep also puts the fluxes it used through the box's own faces: for axis a and side s
// (0 low, 1 high), null or n_cons variables of the face's cells each (the other two axes
// ascending, the lower fastest; variable v starts at v * the face's cell count).
struct BoxFaceFluxes {
  double* at[3][2] = {};
};

// The update of the box [lo, hi) of a block's views `vars` (state p.state read, p.next_state
// written), bitwise the same as EulerKernel run on every cell of the box; with `faces`, the fluxes
// through the box's faces too (the same bits as EulerKernel::low_face_flux).
void update_box_host(const HostVar (&vars)[n_grid_vars], const EulerParams& p, const int lo[3], const int hi[3],
                     const BoxFaceFluxes* faces = nullptr);

// The largest stable dt (before the CFL factor) over the box [lo, hi) of the state p.next_state (the
// set a step wrote: the next time step comes out of the cycle, reduced per box by the task that
// wrote it); unphysical_dt when a cell is not physical.
double box_dt_host(const HostVar (&vars)[n_grid_vars], const EulerParams& p, const int lo[3], const int hi[3]);

}  // namespace korch::hydro
