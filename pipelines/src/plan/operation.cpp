// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The JSON reader every korch input shares (duplicate keys, depth, number range).
#include "../../../core/src/json_input.hpp"

#include <korch/error.hpp>
#include <korch/plan/cost_model.hpp>
#include <korch/plan/operation.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <set>

namespace korch::plan {

using nlohmann::json;

const char* to_string(BarrierKind kind) noexcept {
  return kind == BarrierKind::guard_fill ? "guard_fill" : "reduction";
}

namespace {

std::string step_label(std::size_t i, const Step& s) {
  return s.is_action ? fmt::format("step {} (action '{}')", i, s.action.action)
                     : fmt::format("step {} (barrier {})", i, to_string(s.barrier.kind));
}

std::vector<std::string> names(const json& j, const std::string& op, const std::string& where,
                               const std::string& field) {
  if (!j.is_array()) throw Error::format("operation '{}': {}: field {}: expected an array of names", op, where, field);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i) {
    if (!j[i].is_string())
      throw Error::format("operation '{}': {}: field {}[{}]: expected a name, got {}", op, where, field, i,
                          json_input::excerpt(j[i]));
    out.push_back(j[i].get<std::string>());
  }
  return out;
}

}  // namespace

namespace {

// A barrier step: its kind, name, variables and condition, each field checked.
Barrier read_barrier(const json& s, const std::string& operation, const std::string& where) {
  Barrier barrier;
  for (const auto& item : s.items()) {
    const std::string& k = item.key();
    if (k != "barrier" && k != "name" && k != "variables" && k != "reads" && k != "unless")
      throw Error::format("operation '{}': {}: field {}: unknown field", operation, where, k);
  }
  const std::string kind =
      s["barrier"].is_string() ? s["barrier"].get<std::string>() : json_input::excerpt(s["barrier"]);
  if (kind == "guard_fill")
    barrier.kind = BarrierKind::guard_fill;
  else if (kind == "reduction")
    barrier.kind = BarrierKind::reduction;
  else
    throw Error::format("operation '{}': {}: field barrier: unknown '{}' (guard_fill or reduction)", operation, where,
                        kind);
  if (s.contains("name")) {
    if (!s["name"].is_string())
      throw Error::format("operation '{}': {}: field name: expected a string", operation, where);
    barrier.name = s["name"].get<std::string>();
  }
  const char* list = barrier.kind == BarrierKind::guard_fill ? "variables" : "reads";
  if (s.contains(list)) barrier.variables = names(s[list], operation, where, list);
  if (s.contains(barrier.kind == BarrierKind::guard_fill ? "reads" : "variables"))
    throw Error::format("operation '{}': {}: a {} barrier lists its variables in field {}", operation, where, kind,
                        list);
  if (s.contains("unless")) {
    if (!s["unless"].is_string())
      throw Error::format("operation '{}': {}: field unless: expected a condition string", operation, where);
    try {
      barrier.unless = Condition::parse(s["unless"].get<std::string>(), "unless");
    } catch (const Error& e) {
      throw Error::format("operation '{}': {}: {}", operation, where, e.what());
    }
  }
  return barrier;
}

}  // namespace

Operation Operation::from_json(const std::string& text) {
  const json j = json_input::parse(text, "operation");
  if (!j.is_object()) throw Error("operation: expected a JSON object at the top level");
  Operation o;
  if (!j.contains("name") || !j["name"].is_string()) throw Error("operation: field name: missing or not a string");
  o.name = j["name"].get<std::string>();
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    if (k != "name" && k != "variables" && k != "parameters" && k != "steps")
      throw Error::format("operation '{}': field {}: unknown field (name, variables, parameters, steps)", o.name, k);
  }
  if (j.contains("variables")) o.variables = names(j["variables"], o.name, "top level", "variables");
  if (j.contains("parameters")) {
    if (!j["parameters"].is_object())
      throw Error::format("operation '{}': field parameters: expected an object", o.name);
    for (const auto& p : j["parameters"].items()) {
      if (p.value().is_boolean())
        o.parameters[p.key()] = p.value().get<bool>() ? 1.0 : 0.0;
      else if (p.value().is_number())
        o.parameters[p.key()] = p.value().get<double>();
      else
        throw Error::format("operation '{}': field parameters.{}: expected a number or boolean", o.name, p.key());
    }
  }
  if (!j.contains("steps") || !j["steps"].is_array())
    throw Error::format("operation '{}': field steps: missing or not an array", o.name);
  for (std::size_t i = 0; i < j["steps"].size(); ++i) {
    const json& s = j["steps"][i];
    const std::string where = fmt::format("step {}", i);
    if (!s.is_object()) throw Error::format("operation '{}': {}: expected an object", o.name, where);
    Step step;
    if (s.contains("action")) {
      if (s.size() != 1)
        throw Error::format("operation '{}': {}: an action step has only the field action", o.name, where);
      try {
        step.action = ActionDeclaration::from_json(s["action"].dump());
      } catch (const Error& e) {
        throw Error::format("operation '{}': {}: {}", o.name, where, e.what());
      }
    } else if (s.contains("barrier")) {
      step.is_action = false;
      step.barrier = read_barrier(s, o.name, where);
    } else {
      throw Error::format("operation '{}': {}: expected a field action or barrier", o.name, where);
    }
    o.steps.push_back(std::move(step));
  }
  o.check();
  return o;
}

int Operation::variable_index(const std::string& v) const noexcept {
  for (std::size_t i = 0; i < variables.size(); ++i)
    if (variables[i] == v) return static_cast<int>(i);
  return -1;
}

std::vector<const ActionDeclaration*> Operation::actions() const {
  std::vector<const ActionDeclaration*> out;
  for (const auto& s : steps)
    if (s.is_action) out.push_back(&s.action);
  return out;
}

void Operation::check() const {
  std::set<std::string> seen_vars;
  for (const auto& v : variables)
    if (v.empty() || !seen_vars.insert(v).second)
      throw Error::format("operation '{}': field variables: '{}' is empty or listed twice", name, v);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const std::string where = step_label(i, s);
    auto known = [&](const std::string& v, const std::string& field) {
      if (variable_index(v) < 0)
        throw Error::format("operation '{}': {}: field {}: unknown variable '{}': declare it in variables", name, where,
                            field, v);
    };
    if (s.is_action) {
      try {
        s.action.check();
        check_cost_range(s.action);
      } catch (const Error& e) {
        throw Error::format("operation '{}': {}: {}", name, where, e.what());
      }
      if (!seen.insert(s.action.action).second)
        throw Error::format("operation '{}': {}: field name: action '{}' appears twice: give each its own name", name,
                            where, s.action.action);
      for (std::size_t r = 0; r < s.action.reads.size(); ++r)
        known(s.action.reads[r].variable, fmt::format("reads[{}].variable", r));
      for (std::size_t w = 0; w < s.action.writes.size(); ++w) known(s.action.writes[w], fmt::format("writes[{}]", w));
    } else {
      const char* list = s.barrier.kind == BarrierKind::guard_fill ? "variables" : "reads";
      for (std::size_t v = 0; v < s.barrier.variables.size(); ++v)
        known(s.barrier.variables[v], fmt::format("{}[{}]", list, v));
      if (!s.barrier.unless.empty() && !parameters.count(s.barrier.unless.parameter()))
        throw Error::format("operation '{}': {}: field unless: unknown parameter '{}': declare it in parameters", name,
                            where, s.barrier.unless.parameter());
    }
  }
}

std::string Operation::to_json() const {
  json j;
  j["name"] = name;
  j["variables"] = variables;
  j["parameters"] = json::object();
  for (const auto& [k, v] : parameters) j["parameters"][k] = v;
  j["steps"] = json::array();
  for (const auto& s : steps) {
    if (s.is_action) {
      j["steps"].push_back({{"action", json::parse(s.action.to_json())}});
      continue;
    }
    json b = {{"barrier", to_string(s.barrier.kind)}};
    if (!s.barrier.name.empty()) b["name"] = s.barrier.name;
    b[s.barrier.kind == BarrierKind::guard_fill ? "variables" : "reads"] = s.barrier.variables;
    if (!s.barrier.unless.empty()) b["unless"] = s.barrier.unless.text();
    j["steps"].push_back(b);
  }
  return j.dump(2);
}

}  // namespace korch::plan
