// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime configuration of the hand-bundled step: the built-in that --config names
// (configuration_names.hpp) with the hydro action bound to its teams and the hydro variables on its
// packets. The action-parallel one runs the "diagnostics" action on its device team, whose packets
// carry the density only.
#pragma once

#include "options.hpp"

#include <korch/configuration.hpp>
#include <korch/runtime.hpp>

#include <vector>

namespace korch::hydro {

// The runtime configuration for an Options value when the current state starts at variable
// `state` (0 or var_new), on one of `ranks` ranks that share the grid's blocks.
Configuration make_configuration(const Options& options, int state = 0, int ranks = 1);

// Blocks per device packet: options.packet_blocks, or when that is 0 (--packet-blocks auto), on GPU
// builds with a uniform grid the fewest blocks that make a packet of at least 2^20 interior cells
// (a packet is one launch per kernel over all its blocks, and resident blocks leave no copies for
// small packets to overlap), but no more than one rank's blocks (of `ranks` sharing the grid) over
// the device team's threads, so that each thread has a packet to launch; 2 elsewhere.
int device_packet_blocks(const Options& options, int ranks = 1);

// The starting weights (host, device) of --config split, whose shares then follow the measured
// rates: 1 and 1 where the device is the host's cores too, 1 and 15 for a GPU (`accelerator`), so
// that the first cycle, which measures both sides, gives the host teams a sixteenth of the blocks.
std::vector<double> split_start_weights(bool accelerator);

// The runtime every hydro run makes: two teams of options.threads and two helper teams of one
// thread, which fit every hydro configuration (a run may switch between them).
RuntimeOptions runtime_options(const Options& options);

}  // namespace korch::hydro
