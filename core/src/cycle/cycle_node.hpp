// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A node of one cycle: a pipeline team running an action, or a helper running on a helper team.
#pragma once

#include <korch/configuration.hpp>
#include <korch/helper.hpp>
#include <korch/thread_team.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace korch::detail {

struct CycleNode {
  std::string name;
  ThreadTeam* team = nullptr;
  const TeamConfig* team_config = nullptr;  // set for a pipeline team
  Helper* helper = nullptr;                 // set for a helper
  bool started = false;
};

// The nodes of one cycle in declaration order (teams, then helpers). A configuration has a handful
// of nodes: looking one up by name is a short scan, and a cycle allocates no tree for them.
class CycleNodes {
 public:
  void clear() noexcept { nodes_.clear(); }  // keeps the storage for the next cycle
  void add(CycleNode node) { nodes_.push_back(std::move(node)); }
  // The node named `name`; std::out_of_range where the configuration has none (validation rules
  // that out before a cycle starts).
  CycleNode& at(const std::string& name) {
    for (auto& n : nodes_)
      if (n.name == name) return n;
    throw std::out_of_range("cycle: no node named '" + name + "'");
  }
  auto begin() noexcept { return nodes_.begin(); }
  auto end() noexcept { return nodes_.end(); }
  auto begin() const noexcept { return nodes_.begin(); }
  auto end() const noexcept { return nodes_.end(); }

 private:
  std::vector<CycleNode> nodes_;
};

}  // namespace korch::detail
