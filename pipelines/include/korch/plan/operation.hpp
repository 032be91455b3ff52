// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An operation: what one solution-advance phase applies, in program order (docs/planner.md,
// "Operation files"). Its steps are actions (with their declarations) and barriers: a guard-cell
// fill of some variables or a reduction, each removable by a setup-time condition over the
// operation's parameters.
//
// {"name": "advance", "variables": ["dens", "pres"], "parameters": {"ncomp": 1},
//  "steps": [ {"action": {"name": "A", "writes": ["dens"], ...}},
//             {"barrier": "reduction", "name": "dt", "reads": ["dens"], "unless": "ncomp == 1"},
//             {"barrier": "guard_fill", "variables": ["dens"]} ]}
#pragma once

#include <korch/action_declaration.hpp>
#include <korch/plan/condition.hpp>

#include <map>
#include <string>
#include <vector>

namespace korch::plan {

enum class BarrierKind { guard_fill, reduction };
const char* to_string(BarrierKind kind) noexcept;

struct Barrier {
  BarrierKind kind = BarrierKind::guard_fill;
  std::string name;                    // reductions: what is reduced (for the hook); fills: optional
  std::vector<std::string> variables;  // guard_fill: filled; reduction: read
  Condition unless;                    // the barrier is removed where this holds
};

struct Step {
  bool is_action = true;
  ActionDeclaration action;  // is_action
  Barrier barrier;           // !is_action
};

struct Operation {
  std::string name;
  std::vector<std::string> variables;
  std::map<std::string, double> parameters;
  std::vector<Step> steps;

  // Parses and checks (see check()). Errors name the operation, the action or step, and the field:
  // "operation 'advance': step 3 (action 'B'): field reads[0].variable: unknown variable 'rho'".
  static Operation from_json(const std::string& text);
  std::string to_json() const;
  // Unique action names, known variables, conditions over known parameters, declarations consistent.
  void check() const;

  std::vector<const ActionDeclaration*> actions() const;
  int variable_index(const std::string& variable) const noexcept;  // -1 when unknown
};

}  // namespace korch::plan
