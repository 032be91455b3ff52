// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/plan/cost_measurement.hpp>

#include <algorithm>

namespace korch::plan {

namespace {

const ActionDeclaration& declaration(const std::vector<ActionDeclaration>& actions, const std::string& name) {
  for (const auto& a : actions)
    if (a.action == name) return a;
  throw Error::format("cost measurement: the plan's action '{}' has no declaration: measure a plan of this operation",
                      name);
}

}  // namespace

void CostMeasurement::add(const PlannedBundle& bundle, const std::vector<TraceEvent>& events, const DataSource& source,
                          const std::vector<ActionDeclaration>& actions, const CostModel& model) {
  struct Team {
    const Stage* stage;
    int side;  // 0 host, 1 device
    double blocks_per_item;
  };
  std::map<std::string, Team> teams;
  const double tile_blocks = 1.0 / static_cast<double>(mean_tiles_per_block(source));
  for (const auto& p : bundle.pipelines)
    for (std::size_t s = 0; s < p.stages.size(); ++s) {
      // "": the stage has no team on that side (docs/planner.md, "Cost model").
      if (s < p.host_teams.size() && !p.host_teams[s].empty())
        teams[p.host_teams[s]] = {&p.stages[s], 0, p.host_type == DataType::tile ? tile_blocks : 1.0};
      if (s < p.device_teams.size() && !p.device_teams[s].empty()) teams[p.device_teams[s]] = {&p.stages[s], 1, 1.0};
    }
  for (const auto& e : events) {
    if (e.category != "task") continue;
    const auto it = teams.find(e.team);
    if (it == teams.end()) continue;  // not a stage of this bundle (a helper's work)
    const Team& t = it->second;
    double total = 0.0;
    std::vector<double> cost;
    for (const auto& name : t.stage->actions) {
      const ActionDeclaration& a = declaration(actions, name);
      cost.push_back(t.side == 0 ? model.host_cost(a) : model.device_cost(a));
      total += cost.back();
    }
    const double seconds = static_cast<double>(e.end_ns - e.begin_ns) * 1e-9;
    for (std::size_t i = 0; i < cost.size(); ++i) {
      const double share = total > 0 ? cost[i] / total : 1.0 / static_cast<double>(cost.size());
      samples_[t.side][t.stage->actions[i]].push_back(seconds * share / t.blocks_per_item);
    }
  }
}

std::map<std::string, MeasuredCost> CostMeasurement::costs() const {
  std::map<std::string, MeasuredCost> out;
  for (int side = 0; side < 2; ++side)
    for (const auto& [name, samples] : samples_[side]) {
      if (samples.empty()) continue;
      std::vector<double> sorted = samples;
      const auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2);
      std::nth_element(sorted.begin(), middle, sorted.end());
      // A measurement of zero would read as "not measured": keep it a tiny positive cost.
      (side == 0 ? out[name].host : out[name].device) = std::max(*middle, 1e-12);
    }
  return out;
}

Operation with_measured_costs(const Operation& operation, const std::map<std::string, MeasuredCost>& measured,
                              const CostModel& model) {
  // Seconds per unit of the model's costs, over every measured action and side.
  double seconds = 0.0, units = 0.0;
  for (const ActionDeclaration* a : operation.actions()) {
    const auto it = measured.find(a->action);
    if (it == measured.end()) continue;
    if (it->second.host > 0) {
      seconds += it->second.host;
      units += model.host_cost(*a);
    }
    if (it->second.device > 0) {
      seconds += it->second.device;
      units += model.device_cost(*a);
    }
  }
  if (units <= 0) return operation;
  const double scale = seconds / units;
  Operation out = operation;
  for (auto& step : out.steps) {
    if (!step.is_action) continue;
    ActionDeclaration& a = step.action;
    const auto it = measured.find(a.action);
    const MeasuredCost m = it == measured.end() ? MeasuredCost{} : it->second;
    const double host = m.host > 0 ? m.host : model.host_cost(a) * scale;
    const double device = m.device > 0 ? m.device : model.device_cost(a) * scale;
    a.hints.measured_host = host;
    a.hints.measured_device = device;
  }
  return out;
}

}  // namespace korch::plan
