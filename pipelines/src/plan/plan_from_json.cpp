// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Reading a plan file (the form Plan::to_json writes; docs/planner.md, "Plans").
// The JSON reader every korch input shares (duplicate keys, depth, number range).
#include "../../../core/src/json_input.hpp"

#include <korch/error.hpp>
#include <korch/plan/plan.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace korch::plan {

using nlohmann::json;

namespace {

struct PlanReader {
  std::string where;  // "plan 'op': step 2"
  const json& at(const json& j, const char* key) const {
    if (!j.is_object() || !j.contains(key)) throw Error::format("{}: field {}: missing", where, key);
    return j[key];
  }
  std::vector<std::string> names(const json& j, const std::string& field) const {
    if (!j.is_array()) throw Error::format("{}: field {}: expected an array of names", where, field);
    std::vector<std::string> out;
    for (const auto& n : j) {
      if (!n.is_string())
        throw Error::format("{}: field {}: expected names, got {}", where, field, json_input::excerpt(n));
      out.push_back(n.get<std::string>());
    }
    return out;
  }
  double number(const json& j, const std::string& field) const {
    if (!j.is_number())
      throw Error::format("{}: field {}: expected a number, got {}", where, field, json_input::excerpt(j));
    return j.get<double>();
  }
};

Placement placement_of(const std::string& text, const PlanReader& in, const std::string& field) {
  for (Placement p : {Placement::host, Placement::device, Placement::split})
    if (text == to_string(p)) return p;
  throw Error::format("{}: field {}: unknown placement '{}' (host, device or split)", in.where, field, text);
}

PlannedBundle bundle_of(const json& b, const PlanReader& in) {
  PlannedBundle out;
  const json& name = in.at(b, "name");
  if (!name.is_string()) throw Error::format("{}: field bundle.name: expected a string", in.where);
  out.name = name.get<std::string>();
  // The iterator is read as an action declaration's field, so it accepts the same forms.
  try {
    out.iterator =
        ActionDeclaration::from_json(json{{"name", out.name}, {"iterator", in.at(b, "iterator")}}.dump()).iterator;
  } catch (const Error& e) {
    throw Error::format("{}: field bundle.iterator: {}", in.where, e.what());
  }
  const json& pipelines = in.at(b, "pipelines");
  if (!pipelines.is_array()) throw Error::format("{}: field bundle.pipelines: expected an array", in.where);
  for (std::size_t p = 0; p < pipelines.size(); ++p) {
    const std::string field = fmt::format("bundle.pipelines[{}]", p);
    const json& pj = pipelines[p];
    PlannedPipeline pl;
    const json& stages = in.at(pj, "stages");
    if (!stages.is_array() || stages.empty())
      throw Error::format("{}: field {}.stages: expected a non-empty array", in.where, field);
    for (std::size_t s = 0; s < stages.size(); ++s) {
      Stage st;
      st.actions = in.names(stages[s], fmt::format("{}.stages[{}]", field, s));
      for (const auto& a : st.actions) st.routine += (st.routine.empty() ? "" : "+") + a;
      pl.stages.push_back(std::move(st));
    }
    const json& where = in.at(pj, "placement");
    if (!where.is_string()) throw Error::format("{}: field {}.placement: expected a string", in.where, field);
    pl.placement.placement = placement_of(where.get<std::string>(), in, field + ".placement");
    pl.placement.host_cost = in.number(in.at(pj, "host_cost"), field + ".host_cost");
    pl.placement.device_cost = in.number(in.at(pj, "device_cost"), field + ".device_cost");
    pl.placement.host_weight = in.number(in.at(pj, "host_weight"), field + ".host_weight");
    pl.placement.device_weight = in.number(in.at(pj, "device_weight"), field + ".device_weight");
    // Each stage's side; a plan without them places every stage as the pipeline.
    std::vector<Placement> sides(pl.stages.size(), pl.placement.placement);
    if (pj.contains("stage_placements")) {
      const auto names = in.names(pj["stage_placements"], field + ".stage_placements");
      sides.clear();
      for (std::size_t s = 0; s < names.size(); ++s)
        sides.push_back(placement_of(names[s], in, fmt::format("{}.stage_placements[{}]", field, s)));
      if (sides.size() != pl.stages.size()) {
        throw Error::format("{}: field {}.stage_placements: {} placements for {} stages: give one per stage", in.where,
                            field, sides.size(), pl.stages.size());
      }
    }
    for (std::size_t s = 0; s < sides.size(); ++s) {
      pl.stages[s].placement = sides[s];
      pl.placement.actions.insert(pl.placement.actions.end(), pl.stages[s].actions.size(), sides[s]);
    }
    const json& type = in.at(pj, "host_type");
    const auto host_type = type.is_string() ? parse_data_type(type.get<std::string>()) : std::nullopt;
    if (!host_type)
      throw Error::format("{}: field {}.host_type: expected a data type, got {}", in.where, field,
                          json_input::excerpt(type));
    pl.host_type = *host_type;
    pl.host_teams = in.names(in.at(pj, "host_teams"), field + ".host_teams");
    pl.device_teams = in.names(in.at(pj, "device_teams"), field + ".device_teams");
    out.pipelines.push_back(std::move(pl));
  }
  const json& configuration = in.at(b, "configuration");
  try {
    out.configuration = Configuration::from_json(configuration.dump());
  } catch (const Error& e) {
    throw Error::format("{}: field bundle.configuration: {}", in.where, e.what());
  }
  return out;
}

}  // namespace

Plan Plan::from_json(const std::string& text) {
  const json j = json_input::parse(text, "plan");
  PlanReader in{"plan"};
  Plan plan;
  const json& operation = in.at(j, "operation");
  if (!operation.is_string()) throw Error("plan: field operation: expected a string");
  plan.operation = operation.get<std::string>();
  in.where = fmt::format("plan '{}'", plan.operation);
  const json& digest = in.at(j, "operation_digest");
  if (!digest.is_string()) throw Error::format("{}: field operation_digest: expected a string", in.where);
  plan.operation_digest = digest.get<std::string>();
  const json& actions = in.at(j, "actions");
  if (!actions.is_array()) throw Error::format("{}: field actions: expected an array", in.where);
  for (std::size_t a = 0; a < actions.size(); ++a) {
    try {
      plan.actions.push_back(ActionDeclaration::from_json(actions[a].dump()));
    } catch (const Error& e) {
      throw Error::format("{}: actions[{}]: {}", in.where, a, e.what());
    }
  }
  const json& steps = in.at(j, "steps");
  if (!steps.is_array()) throw Error::format("{}: field steps: expected an array", in.where);
  const std::string plan_where = in.where;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    in.where = fmt::format("{}: step {}", plan_where, i);
    const json& s = steps[i];
    PlanStep step;
    if (s.contains("guard_fill")) {
      step.kind = StepKind::guard_fill;
      step.variables = in.names(s["guard_fill"], "guard_fill");
    } else if (s.contains("reduction")) {
      step.kind = StepKind::reduction;
      if (!s["reduction"].is_string()) throw Error::format("{}: field reduction: expected a name", in.where);
      step.name = s["reduction"].get<std::string>();
      step.variables = in.names(in.at(s, "reads"), "reads");
    } else if (s.contains("bundle")) {
      step.bundle = bundle_of(s["bundle"], in);
      // Every action of a stage is declared in the plan's actions.
      const auto& pipelines = step.bundle.pipelines;
      for (std::size_t p = 0; p < pipelines.size(); ++p)
        for (std::size_t st = 0; st < pipelines[p].stages.size(); ++st)
          for (const auto& a : pipelines[p].stages[st].actions)
            if (std::none_of(plan.actions.begin(), plan.actions.end(),
                             [&](const ActionDeclaration& d) { return d.action == a; }))
              throw Error::format(
                  "{}: field bundle.pipelines[{}].stages[{}]: action '{}' is not declared in field actions", in.where,
                  p, st, a);
    } else {
      throw Error::format("{}: expected a field bundle, guard_fill or reduction", in.where);
    }
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

}  // namespace korch::plan
