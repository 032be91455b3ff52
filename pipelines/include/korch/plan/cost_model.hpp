// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The scheduler's cost model (docs/planner.md, "Cost model"): a cost per item of each action on
// the host and on a device, from measured timings where given, else relative costs, else the
// short/heavy words. A pipeline is placed stage by stage: its actions run on the host, then split
// data-parallel between host and device, then on a device (each part possibly empty). A pipeline
// that can run on one side as a whole keeps the whole-pipeline placement (a side where it is
// clearly cheaper by the factor `clear_win`, else split with shares proportional to speed) unless
// changing sides between its actions is clearly cheaper still, each change costing `side_change`.
#pragma once

#include <korch/action_declaration.hpp>

#include <optional>
#include <vector>

namespace korch::plan {

// Where one action (or stage) runs; split: data-parallel between host and device teams.
enum class Placement { host, device, split };
const char* to_string(Placement placement) noexcept;

struct PipelinePlacement {
  // host or device when every action runs there; split when the pipeline runs on both sides (a
  // data-parallel split, or some actions on the host and later ones on a device).
  Placement placement = Placement::host;
  double host_cost = 0.0;  // per item, summed over the pipeline's actions
  double device_cost = 0.0;
  double host_weight = 1.0;  // the shares of the items of the split actions (1 and 0 without)
  double device_weight = 0.0;
  std::vector<Placement> actions;  // per action, in pipeline order: host…, split…, device…
};

// Given costs (hints cost or measured, per item) lie in this range, or are 0 for none: sums over a
// pipeline of up to 10^8 actions and speeds (1 / cost) then stay finite, so every cost and share
// in a plan file is a number that reads back.
inline constexpr double min_given_cost = 1e-300, max_given_cost = 1e300;
// Throws korch::Error naming the action and field (hints.cost.host, ...) for a cost outside it.
void check_cost_range(const ActionDeclaration& action);

struct CostModel {
  // Costs per item when only the words are given: device launches make short actions dear there.
  double host_short = 0.1, host_normal = 1.0, host_heavy = 10.0;
  double device_short = 0.5, device_normal = 0.7, device_heavy = 1.0;
  double clear_win = 2.0;
  // The cost per item of one change of side between consecutive actions (handing the item over:
  // a helper, a queue, on a real device a copy), in the same units as the actions' costs.
  double side_change = 0.2;
  bool devices = true;  // false: everything on the host

  double host_cost(const ActionDeclaration& action) const noexcept;
  double device_cost(const ActionDeclaration& action) const noexcept;
  // Where the actions of a pipeline (in order) run; nullopt when no order host…, split…, device…
  // honours the hints (a device_only action before a host_only one, or device_only without devices).
  std::optional<PipelinePlacement> place(const std::vector<const ActionDeclaration*>& actions) const;
  // The shares and summary of a pipeline from its per-action placements (after the layout gives up
  // a split, for one).
  void summarize(PipelinePlacement& placement, const std::vector<const ActionDeclaration*>& actions) const;
};

}  // namespace korch::plan
