// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal: whether a program that a launcher (mpirun, mpiexec, srun) started as several ranks has
// told korch its ranks, so that it never runs N copies of the whole problem by mistake
// (docs/ranks.md, "Started as several ranks").
#pragma once

#include <string>

namespace korch::detail {

struct LauncherRanks {
  int size = 1;          // ranks the launcher started (1: none, or not started by a launcher)
  std::string variable;  // the environment variable that says so, "NAME=value"
};
LauncherRanks launcher_ranks();

// KORCH_RANKS_INDEPENDENT=1: the ranks are meant to be independent copies.
bool ranks_independent();

// A communicator of MPI ranks was made (Communicator::world() with MPI running, from_handle, an
// MpiSession): the program knows it runs on ranks.
void note_ranks_told() noexcept;

// Throws korch::Error naming the launcher's size and the fix when a launcher started several ranks,
// korch was never told of them and KORCH_RANKS_INDEPENDENT is not 1. Cheap: called on every cycle.
void check_ranks_told();

}  // namespace korch::detail
