// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The links of one cycle between teams: work subscriptions, thread subscriptions, and external
// work publishers (the distributor feeding a pipeline's entry, a router feeding its two subscribers).
// Made for one cycle and undone when it ends: unwire() reports a link that cannot be removed; the
// destructor removes whatever is still linked (an exception path), so no team keeps a stale link
// or publisher into the next cycle.
#pragma once

#include "cycle_errors.hpp"
#include "cycle_node.hpp"
#include "cycle_scratch.hpp"

#include <map>
#include <string>
#include <vector>

namespace korch::detail {

class CycleWiring {
 public:
  // Links every edge of `c` between the nodes, listing them in `links` (emptied first); if one
  // link fails, those made are undone and the error is rethrown.
  CycleWiring(const Configuration& c, CycleNodes& nodes, CycleLinks& links);
  ~CycleWiring();
  CycleWiring(const CycleWiring&) = delete;
  CycleWiring& operator=(const CycleWiring&) = delete;

  // The pipeline entries the distributor feeds (each has the distributor as external publisher).
  const std::vector<ThreadTeam*>& entries() const noexcept { return links_.entries; }
  // Each router's two subscribers (in the order of its to), each with the router as external publisher.
  const std::map<std::string, std::vector<ThreadTeam*>>& router_targets() const noexcept { return router_targets_; }

  // Removes every link; a failure to remove one is added to `errors`.
  void unwire(CycleErrors& errors);

 private:
  CycleLinks& links_;
  std::map<std::string, std::vector<ThreadTeam*>> router_targets_;
  bool unwired_ = false;
};

}  // namespace korch::detail
