// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API's built-in configurations bound to a code's action names, and the variables their
// packets carry, derived from what each action reads and writes (docs/c-api.md, "Built-in
// configurations").
#include "c_library.hpp"

#include <korch/configuration.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>
#include <korch/korch_c.h>

#include <algorithm>
#include <deque>
#include <set>
#include <string>
#include <vector>

namespace {

using korch::c_api::ActionVariables;
using korch::c_api::ConfigurationObject;
using korch::c_api::guarded;
using korch::c_api::Lease;
using korch::c_api::object_of;
using korch::c_api::require;
using korch::c_api::require_text;

// The slots of a built-in as "A, B (optional)", for messages.
std::string slot_list(const std::string& builtin) {
  std::string out;
  for (const auto& s : korch::configurations::slots(builtin))
    out += (out.empty() ? "" : ", ") + s.name + (s.optional ? " (optional)" : "");
  return out;
}

bool makes_packets(const korch::HelperConfig& h) {
  return (h.kind == korch::HelperKind::aggregator || h.kind == korch::HelperKind::aggregator_mover) &&
         korch::is_packet(h.output);
}

// The actions of the teams the packets of helper `start` reach: along work edges through teams,
// movers and routers, up to the helper that unpacks them or packs anew.
std::set<std::string> actions_reached(const korch::Configuration& c, const std::string& start) {
  const std::vector<korch::Edge> edges = c.all_work_edges();
  std::set<std::string> actions, seen{start};
  std::deque<std::string> next{start};
  while (!next.empty()) {
    const std::string node = next.front();
    next.pop_front();
    for (const auto& e : edges) {
      if (e.from != node || !seen.insert(e.to).second) continue;
      if (const auto* team = c.find_team(e.to)) {
        actions.insert(team->action);
        next.push_back(e.to);
      } else if (const auto* h = c.find_helper(e.to);
                 h && (h->kind == korch::HelperKind::mover || h->kind == korch::HelperKind::router)) {
        next.push_back(e.to);
      }
    }
  }
  return actions;
}

void add_all(std::set<int>& to, const std::vector<int>& from) { to.insert(from.begin(), from.end()); }

// Each packing helper whose packets reach a declared action carries what those actions read
// (copy-in) and write (copy-in-out); where they also reach an action nobody declared, what the
// configuration itself had that helper carry besides.
void derive_packet_variables(ConfigurationObject& o) {
  o.configuration = o.original;
  for (auto& h : o.configuration.helpers) {
    if (!makes_packets(h)) continue;
    std::set<int> in, in_out;
    bool any = false, all = true;
    for (const auto& action : actions_reached(o.configuration, h.name)) {
      auto it = o.declared.find(action);
      if (it == o.declared.end()) {
        all = false;
        continue;
      }
      any = true;
      add_all(in, it->second.reads);
      add_all(in_out, it->second.writes);
    }
    if (!any) continue;
    std::set<int> out;
    if (!all) {
      add_all(in, h.variables.copy_in);
      add_all(in_out, h.variables.copy_in_out);
      add_all(out, h.variables.copy_out);
    }
    for (int v : in_out) in.erase(v);
    for (int v : out) in.erase(v);
    h.variables.copy_in.assign(in.begin(), in.end());
    h.variables.copy_in_out.assign(in_out.begin(), in_out.end());
    h.variables.copy_out.assign(out.begin(), out.end());
  }
}

std::vector<int> variable_list(const int32_t* list, int32_t n, const char* what, const std::string& action) {
  if (n < 0) throw korch::Error::format("{} is {} for action '{}': give 0 or more", what, n, korch::excerpt(action));
  if (n > 0 && list == nullptr)
    throw korch::Error::format("the list of {} is NULL for action '{}': pass {} variable numbers", what,
                               korch::excerpt(action), n);
  std::vector<int> out(list, list + n);
  for (int v : out)
    if (v < 0)
      throw korch::Error::format("action '{}' lists variable {} in {}: variables are numbered from 0",
                                 korch::excerpt(action), v, what);
  return out;
}

}  // namespace

extern "C" {

int korch_configuration_builtin_bound(const char* name, const char* const* actions, int32_t n_actions,
                                      korch_configuration** out) {
  return guarded("korch_configuration_builtin_bound", [&] {
    require(out, "out", "pass the address of a korch_configuration pointer");
    *out = nullptr;
    const std::string builtin = require_text(name, "name");
    korch::configurations::json(builtin);  // an unknown name: the error lists the built-ins
    if (n_actions < 0 || (n_actions > 0 && actions == nullptr))
      throw korch::Error::format("built-in '{}': {} action names{}: give the names for its slots {}, in order",
                                 korch::excerpt(builtin), n_actions, n_actions > 0 ? " at NULL" : "",
                                 slot_list(builtin));
    std::vector<std::string> names;
    for (int32_t i = 0; i < n_actions; ++i) names.push_back(require_text(actions[i], "an action name"));
    // Errors of the binding name the built-in, its slots and the fix (Configuration::bind_actions).
    korch::Configuration bound = korch::configurations::get(builtin, names);
    *out = korch::c_api::make_handle<ConfigurationObject, korch_configuration>(
        std::make_shared<ConfigurationObject>(std::move(bound)));
  });
}

int korch_configuration_packet_variables(korch_configuration* configuration, const char* action, const int32_t* reads,
                                         int32_t n_reads, const int32_t* writes, int32_t n_writes) {
  return guarded("korch_configuration_packet_variables", [&] {
    const Lease changing =
        korch::c_api::lease<ConfigurationObject>(configuration, "configuration", Lease::exclusive, "change");
    auto& o = object_of<ConfigurationObject>(changing);
    const std::string name = require_text(action, "action");
    const auto& teams = o.original.teams;
    if (std::none_of(teams.begin(), teams.end(), [&](const korch::TeamConfig& t) { return t.action == name; })) {
      std::string applied;
      for (const auto& s : o.original.slots()) applied += (applied.empty() ? "" : ", ") + s.name;
      throw korch::Error::format("configuration '{}' has no team that applies action '{}': its actions are {}",
                                 korch::excerpt(o.original.name), korch::excerpt(name), applied);
    }
    ActionVariables declared{variable_list(reads, n_reads, "reads", name),
                             variable_list(writes, n_writes, "writes", name)};
    if (declared.reads.empty() && declared.writes.empty())
      throw korch::Error::format("action '{}' reads and writes no variable: name at least one, or leave it undeclared",
                                 korch::excerpt(name));
    o.declared[name] = std::move(declared);
    derive_packet_variables(o);
  });
}

}  // extern "C"
