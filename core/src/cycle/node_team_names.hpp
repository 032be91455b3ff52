// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// While a cycle runs, each pooled team carries the name of the node it runs, so that every message
// of the cycle names a team as the configuration does; the pool's own names (which auxiliary cycles
// use) come back when the cycle ends.
#pragma once

#include "cycle_node.hpp"

#include <string>
#include <utility>
#include <vector>

namespace korch::detail {

class NodeTeamNames {
 public:
  // `pool_names` holds the pool's names until the cycle ends (emptied first).
  NodeTeamNames(const CycleNodes& nodes, std::vector<std::pair<ThreadTeam*, std::string>>& pool_names)
      : pool_names_(pool_names) {
    pool_names_.clear();
    for (const CycleNode& node : nodes) {
      pool_names_.emplace_back(node.team, node.team->name());
      node.team->rename(node.name);
    }
  }
  ~NodeTeamNames() {
    for (auto& [team, name] : pool_names_) {
      try {
        team->rename(std::move(name));
      } catch (...) {
        // Only a team the cycle could not bring back to Idle refuses; it keeps its node's name.
      }
    }
  }
  NodeTeamNames(const NodeTeamNames&) = delete;
  NodeTeamNames& operator=(const NodeTeamNames&) = delete;

 private:
  std::vector<std::pair<ThreadTeam*, std::string>>& pool_names_;
};

}  // namespace korch::detail
