// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The folders korch-hydro will write to (--out for pictures, traces and checkpoints; --plot-dir for
// plot files), made and tried before Kokkos starts, so that a folder that cannot be written is a
// usage error naming its option (exit status 2) and not a failure after set-up.
#pragma once

#include "options.hpp"

namespace korch::hydro {

// Makes each folder the options will write to and writes a probe file in it
// (korch::prepare_output_directory); throws korch::Error naming the option and the reason. Call it on
// the rank that writes (rank 0).
void check_output_folders(const Options& options);

}  // namespace korch::hydro
