// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A plan: what the scheduler made of an operation (docs/planner.md, "Plans"). Ordered steps, each
// a bundle (its action-parallel pipelines, their stages and placements, and the korch
// configuration that runs it) or the work between bundles (a guard-cell fill, a reduction).
#pragma once

#include <korch/action_declaration.hpp>
#include <korch/configuration.hpp>
#include <korch/plan/cost_model.hpp>

#include <string>
#include <vector>

namespace korch::plan {

// Consecutive actions of a pipeline run as one routine by one team (fused when more than one).
struct Stage {
  std::vector<std::string> actions;       // in program order
  std::string routine;                    // the bundle routine's name: the actions joined by '+'
  Placement placement = Placement::host;  // its side (split: a host team and a device team, shared by speed)
};

struct PlannedPipeline {
  std::vector<Stage> stages;
  PipelinePlacement placement;
  DataType host_type = DataType::tile;  // the items of its host teams (block when an action wants blocks)
  // One name per stage, "" for a stage without a team on that side; empty when no stage has one.
  std::vector<std::string> host_teams;
  std::vector<std::string> device_teams;
};

struct PlannedBundle {
  std::string name;
  ActionIterator iterator;
  std::vector<PlannedPipeline> pipelines;
  Configuration configuration;
};

enum class StepKind { bundle, guard_fill, reduction };
const char* to_string(StepKind kind) noexcept;

struct PlanStep {
  StepKind kind = StepKind::bundle;
  PlannedBundle bundle;                // bundle
  std::vector<std::string> variables;  // guard_fill: filled; reduction: read
  std::string name;                    // reduction: what is reduced
};

struct Plan {
  std::string operation;
  std::string operation_digest;            // operation_digest(operation) when planned (plan_check.hpp)
  std::vector<ActionDeclaration> actions;  // the operation's, in program order
  std::vector<PlanStep> steps;

  const ActionDeclaration& action(const std::string& name) const;  // throws when unknown
  std::vector<const PlannedBundle*> bundles() const;
  std::string to_json() const;
  // Reads what to_json wrote (a plan file may be edited by hand: errors name the step and field).
  static Plan from_json(const std::string& text);
};

// A Graphviz drawing of a configuration (configurations::to_dot, korch/configurations/drawing.hpp).
std::string configuration_dot(const Configuration& configuration);

}  // namespace korch::plan
