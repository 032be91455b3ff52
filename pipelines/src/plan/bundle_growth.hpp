// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Growing one bundle action by action (docs/planner.md, "Scheduling"): whether the bundle still
// fits the runtime with one more action, decided from the placements of its pipelines alone. A
// layout fuses stages until the teams fit and gives up splits while they do not, so whether it
// succeeds depends only on each pipeline's parts (host, split, device): trying an action costs the
// placement of the one pipeline it joins, not a layout of the whole bundle. It takes an action
// exactly when lay_out of the grown bundle would succeed.
#pragma once

#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/scheduler.hpp>

#include <map>
#include <vector>

namespace korch::plan::detail {

class BundleGrowth {
 public:
  BundleGrowth(const KernelGraph& graph, const SchedulerOptions& options);

  // Starts a new bundle with `seed`; false when the action does not fit a bundle even alone.
  bool start(int seed);
  // Adds `action` (later in program order than every member) when the bundle still fits with it;
  // false, and the bundle unchanged, otherwise.
  bool try_add(int action);
  bool contains(int action) const { return root_[static_cast<std::size_t>(action)] >= 0; }
  // The members in program order.
  std::vector<int> members() const;

 private:
  // What decides whether a pipeline fits: its teams and helpers once its stages are fused as far
  // as its sides allow, and the same after its split part (if any) goes to one side.
  // Until placed (known), a pipeline counts as the largest any placement gives: a host, a split
  // and a device part. A bundle that fits so fits with any placement, and placing a pipeline of k
  // actions costs O(k²): a long chain is placed only when the bundle would not fit otherwise.
  struct Shape {
    bool known = false;
    bool split = true;
    unsigned teams = 4, helpers = 3;
    unsigned unsplit_teams = 2, unsplit_helpers = 1;
  };
  struct Pipeline {
    std::vector<int> actions;  // program order
    Shape shape;
  };
  // Whether the hints allow some placement (no device_only action before a host_only one, none
  // without devices): what makes CostModel::place fail.
  bool placeable(const std::vector<int>& actions) const;
  void place(const std::vector<int>& actions, Shape& shape) const;
  bool fits(const std::map<int, Shape*>& pipelines) const;
  void clear();

  const KernelGraph& graph_;
  const SchedulerOptions& options_;
  std::vector<int> root_;              // per action: the first action of its pipeline, -1 outside the bundle
  std::map<int, Pipeline> pipelines_;  // by first action: the order lay_out gives them
};

}  // namespace korch::plan::detail
