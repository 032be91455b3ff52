// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The action routines of the hydro bundle: the update of a tile, block or packet (host or
// device path) and the per-block diagnostics.
#pragma once

#include <korch/action_routine.hpp>

namespace korch::hydro {

ActionRoutine hydro_routine();
ActionRoutine diagnostics_routine();

}  // namespace korch::hydro
