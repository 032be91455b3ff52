// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The qualitative part (mode) of a thread team's extended finite-state machine
// (docs/thread-team.md). The quantitative part (N_i, N_w, N_c, N_Q) lives in ThreadTeam.
#pragma once

#include <ostream>

namespace korch {

enum class TeamMode {
  Idle,               // all threads Idle, queue empty, no action routine
  RunningOpen,        // a cycle runs and its queue still accepts items
  RunningClosed,      // a cycle runs, its queue is closed and holds at least one item
  RunningNoMoreWork,  // a cycle runs, its queue is closed and empty; threads are finishing
};

constexpr const char* to_string(TeamMode mode) noexcept {
  switch (mode) {
    case TeamMode::Idle: return "Idle";
    case TeamMode::RunningOpen: return "RunningOpen";
    case TeamMode::RunningClosed: return "RunningClosed";
    case TeamMode::RunningNoMoreWork: return "RunningNoMoreWork";
  }
  return "?";
}

inline std::ostream& operator<<(std::ostream& out, TeamMode mode) { return out << to_string(mode); }

}  // namespace korch
