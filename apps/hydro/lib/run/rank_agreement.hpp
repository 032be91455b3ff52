// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Every rank of a korch-hydro run must run the same simulation: the options that shape the grid,
// the physics, the number of steps or the end time and the outputs are compared over the ranks
// before anything else talks to them (docs/ranks.md, "Ranks agree on the run"). Options that only
// place the work on a rank (--threads, --tile, --packet-blocks, --device-kernel, --split-even, --host-parallel,
// --quiet) may differ.
#pragma once

#include "options.hpp"

#include <korch/communicator.hpp>

#include <string>
#include <utility>
#include <vector>

namespace korch::hydro {

// The options that shape a run and their values as the command line spells them, in a fixed order.
std::vector<std::pair<std::string, std::string>> run_shaping_options(const Options& options);

// Compares this rank's run-shaping options with every other rank's and returns "" when all agree,
// else one text, the same on every rank, naming each option that differs with every rank's value
// (or the ranks whose command line was refused). `own_error` is this rank's refusal of its command
// line ("" when it has none); such a rank takes part all the same, so that no rank waits for it.
// Collective, and the run's first: its first message is one 64-bit digest per rank, whatever the
// options, so that no disagreement can make it hang; the values travel only after a mismatch.
std::string rank_disagreement(const Communicator& ranks, const Options& options, const std::string& own_error);

}  // namespace korch::hydro
