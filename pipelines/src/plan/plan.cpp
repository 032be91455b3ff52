// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/configurations/drawing.hpp>
#include <korch/error.hpp>
#include <korch/plan/plan.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace korch::plan {

using nlohmann::json;

const char* to_string(StepKind kind) noexcept {
  switch (kind) {
    case StepKind::bundle: return "bundle";
    case StepKind::guard_fill: return "guard_fill";
    case StepKind::reduction: return "reduction";
  }
  return "?";
}

const ActionDeclaration& Plan::action(const std::string& name) const {
  for (const auto& a : actions)
    if (a.action == name) return a;
  throw Error::format("plan of '{}': no action '{}'", operation, name);
}

std::vector<const PlannedBundle*> Plan::bundles() const {
  std::vector<const PlannedBundle*> out;
  for (const auto& s : steps)
    if (s.kind == StepKind::bundle) out.push_back(&s.bundle);
  return out;
}

std::string Plan::to_json() const {
  json j;
  j["operation"] = operation;
  j["operation_digest"] = operation_digest;
  j["actions"] = json::array();
  for (const auto& a : actions) j["actions"].push_back(json::parse(a.to_json()));
  j["steps"] = json::array();
  for (const auto& s : steps) {
    if (s.kind == StepKind::guard_fill) {
      j["steps"].push_back({{"guard_fill", s.variables}});
      continue;
    }
    if (s.kind == StepKind::reduction) {
      j["steps"].push_back({{"reduction", s.name}, {"reads", s.variables}});
      continue;
    }
    const PlannedBundle& b = s.bundle;
    json pipelines = json::array();
    for (const auto& p : b.pipelines) {
      json stages = json::array();
      json sides = json::array();
      for (const auto& st : p.stages) {
        stages.push_back(st.actions);
        sides.push_back(to_string(st.placement));
      }
      json pj = {{"stages", stages},
                 {"stage_placements", sides},
                 {"placement", to_string(p.placement.placement)},
                 {"host_cost", p.placement.host_cost},
                 {"device_cost", p.placement.device_cost},
                 {"host_weight", p.placement.host_weight},
                 {"device_weight", p.placement.device_weight},
                 {"host_type", to_string(p.host_type)},
                 {"host_teams", p.host_teams},
                 {"device_teams", p.device_teams}};
      if (p.placement.placement == Placement::split) {
        const double total = p.placement.host_weight + p.placement.device_weight;
        pj["host_fraction"] = p.placement.host_weight / total;
      }
      pipelines.push_back(pj);
    }
    j["steps"].push_back({{"bundle",
                           {{"name", b.name},
                            {"iterator", b.iterator.kind == IteratorKind::level ? json{{"level", b.iterator.level}}
                                                                                : json(to_string(b.iterator.kind))},
                            {"pipelines", pipelines},
                            {"configuration", json::parse(b.configuration.to_json())}}}});
  }
  return j.dump(2);
}

std::string configuration_dot(const Configuration& c) { return configurations::to_dot(c); }

}  // namespace korch::plan
