// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A node of one cycle: a pipeline team running an action, or a helper running on a helper team.
#pragma once

#include <korch/configuration.hpp>
#include <korch/helper.hpp>
#include <korch/thread_team.hpp>

#include <map>
#include <string>

namespace korch::detail {

struct CycleNode {
  std::string name;
  ThreadTeam* team = nullptr;
  const TeamConfig* team_config = nullptr;  // set for a pipeline team
  Helper* helper = nullptr;                 // set for a helper
  bool started = false;
};

using CycleNodes = std::map<std::string, CycleNode>;

}  // namespace korch::detail
