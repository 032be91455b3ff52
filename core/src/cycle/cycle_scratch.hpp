// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The storage a cycle fills and empties again: its nodes, the teams' pool names while the cycle
// renames them, and its links. A Runtime keeps one and hands it to each cycle (cycles of one
// runtime never overlap), so that a cycle of a configuration run before allocates none of it.
#pragma once

#include "cycle_node.hpp"

#include <korch/thread_team.hpp>

#include <string>
#include <utility>
#include <vector>

namespace korch::detail {

// The links of one cycle (cycle_wiring.hpp), by kind.
struct CycleLinks {
  std::vector<ThreadTeam*> work, thread, external, entries;
};

struct CycleScratch {
  CycleNodes nodes;
  std::vector<std::pair<ThreadTeam*, std::string>> pool_names;  // node_team_names.hpp
  CycleLinks links;
};

}  // namespace korch::detail
