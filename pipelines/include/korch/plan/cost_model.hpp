// The scheduler's cost model (docs/planner.md, "Cost model"): a cost per item of each action on
// the host and on a device, from measured timings where given, else relative costs, else the
// short/heavy words; a pipeline's cost is the sum of its actions'. A pipeline goes where it is
// clearly cheaper (by the factor `clear_win`), and is split data-parallel between host and device
// otherwise, each side's share proportional to its speed.
#pragma once

#include <korch/action_declaration.hpp>

#include <optional>
#include <vector>

namespace korch::plan {

enum class Placement { host, device, split };
const char* to_string(Placement placement) noexcept;

struct PipelinePlacement {
  Placement placement = Placement::host;
  double host_cost = 0.0;    // per item, summed over the pipeline's actions
  double device_cost = 0.0;
  double host_weight = 1.0;  // split only: the shares of the items
  double device_weight = 0.0;
};

struct CostModel {
  // Costs per item when only the words are given: device launches make short actions dear there.
  double host_short = 0.1, host_normal = 1.0, host_heavy = 10.0;
  double device_short = 0.5, device_normal = 0.7, device_heavy = 1.0;
  double clear_win = 2.0;
  bool devices = true;  // false: everything on the host

  double host_cost(const ActionDeclaration& action) const noexcept;
  double device_cost(const ActionDeclaration& action) const noexcept;
  // Where a pipeline of these actions runs; nullopt when one is host_only and another device_only
  // (no single pipeline can hold both).
  std::optional<PipelinePlacement> place(const std::vector<const ActionDeclaration*>& actions) const;
};

}  // namespace korch::plan
