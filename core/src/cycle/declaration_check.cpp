// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "declaration_check.hpp"

#include <korch/error.hpp>
#include <korch/excerpt.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace korch::detail {

namespace {

// The actions of the teams reachable along work edges from a group's entries.
std::vector<std::string> actions_of_group(const Configuration& c, const DistributorGroup& group) {
  std::multimap<std::string, std::string> next;
  for (const auto& e : c.all_work_edges()) next.emplace(e.from, e.to);
  std::set<std::string> seen;
  std::vector<std::string> todo(group.pipelines.begin(), group.pipelines.end());
  std::vector<std::string> actions;
  while (!todo.empty()) {
    const std::string node = todo.back();
    todo.pop_back();
    if (!seen.insert(node).second) continue;
    if (const TeamConfig* t = c.find_team(node)) actions.push_back(t->action);
    auto [lo, hi] = next.equal_range(node);
    for (auto it = lo; it != hi; ++it) todo.push_back(it->second);
  }
  return actions;
}

struct Conflict {
  std::string variable;  // empty: none
  std::string how;
};

// The first variable on which `a` and `b` conflict, and how.
Conflict conflict(const ActionDeclaration& a, const ActionDeclaration& b) {
  for (const auto& w : a.writes) {
    if (b.writes_variable(w)) return {w, "both write"};
    if (b.reads_variable(w)) return {w, "the first writes what the second reads:"};
  }
  for (const auto& w : b.writes)
    if (a.reads_variable(w)) return {w, "the second writes what the first reads:"};
  return {};
}

}  // namespace

void check_declarations(const Configuration& c, const Bundle& bundle) {
  if (c.distributor.kind == DistributorKind::data_parallel || c.distributor.groups.size() < 2) return;
  std::vector<std::vector<std::string>> groups;
  for (const auto& g : c.distributor.groups) groups.push_back(actions_of_group(c, g));
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (std::size_t j = i + 1; j < groups.size(); ++j) {
      for (const auto& an : groups[i]) {
        for (const auto& bn : groups[j]) {
          const ActionRoutine* ar = bundle.find(an);
          const ActionRoutine* br = bundle.find(bn);
          if (!ar || !br || !ar->declaration() || !br->declaration()) continue;
          const Conflict k = conflict(*ar->declaration(), *br->declaration());
          if (k.variable.empty()) continue;
          throw Error::format(
              "configuration '{}', bundle '{}': actions '{}' and '{}' run in action-parallel pipelines "
              "(distributor groups {} and {}) but {} variable '{}': put them in one pipeline, in "
              "order, or in separate bundles",
              excerpt(c.name), excerpt(bundle.name()), excerpt(an), excerpt(bn), i, j, k.how, k.variable);
        }
      }
    }
  }
}

}  // namespace korch::detail
