// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One hydro step as a planner operation (docs/planner.md, "Hydro as an operation"): the actions of
// a step (the update of a block, the largest stable time step of what it wrote, the per-block
// diagnostics) with their declarations in apps/hydro/hydro_operation.json, their bodies in an
// ActionRegistry, and the plan the scheduler makes of them, run by korch::plan::Executor. The
// operation's variables are roles: "rho".."E" are the current state set, "rho_next".."E_next" the
// one the step writes; which grid variables they are alternates from step to step
// (EulerParams::state and next_state).
#pragma once

#include "euler.hpp"

#include <korch/configuration.hpp>
#include <korch/plan/action_registry.hpp>
#include <korch/plan/executor.hpp>
#include <korch/plan/operation.hpp>
#include <korch/plan/plan.hpp>
#include <korch/runtime.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace korch::hydro {

struct BlockDiagnostics;
struct AmrStepParameters;
struct Options;

// The operation file compiled into korch-hydro (apps/hydro/hydro_operation.json).
const std::string& builtin_operation_json();
// The operation in `path` ("builtin": the compiled-in one). Throws korch::Error naming the file and
// the field when it cannot be read or parsed, or when its variables are not the ten roles in order.
plan::Operation load_operation(const std::string& path);
// Checks that `op` (from `file`) does what the run's options ask: a "time_step" reduction, a
// "conduction" one with --conduction, an action on tiles with --tile; throws korch::Error naming
// the file and what to add otherwise.
void check_operation_for(const plan::Operation& op, const Options& options, const std::string& file);
// What the run's step is, as the summary and pictures name it: the built-in configuration's name, or
// "plan of the built-in operation" / "plan of FILE".
std::string configuration_label(const Options& options);

// What the action bodies work on during one run of the plan.
struct HydroStepState {
  EulerParams euler;
  BlockDiagnostics* diagnostics = nullptr;  // indexed by block id
  double cell_volume = 1.0;
  // Per block: the largest stable dt (before the CFL factor) of the cells the update wrote. A
  // minimum over the block's items, so tiles may share a slot.
  std::unique_ptr<std::atomic<double>[]> block_dt;
  int n_blocks = 0;
  // On an adaptive mesh (a ForestMesh's leaves): the mesh, where the update records the fluxes at
  // level jumps, and its cost measurement; null on korch::Grid.
  const AmrStepParameters* amr = nullptr;
};

// The work between bundles that the application does: the guard-cell fill of the current state
// set and the operation's reductions ("time_step", and "conduction", which also solves the heat
// equation on the energy the update wrote).
struct HydroStepHooks {
  std::function<void()> fill_current_guards;
  // Optional: the blocks in an order that fills the current set's guard cells during the cycle
  // (ExecutionHooks::filling_order), each block handed out once its own are valid.
  std::function<BlockIterator*()> current_guards_order;
  std::function<void(const HydroStepState& state)> time_step;
  std::function<void(const HydroStepState& state)> conduction;
};

// The bodies of every hydro action ("hydro_update", "cell_dt", "diagnostics") over `state`, and
// the hooks (which throw korch::Error naming the variable or reduction the operation asks for and
// korch-hydro cannot do).
plan::ActionRegistry hydro_action_registry(HydroStepState& state, HydroStepHooks hooks);
// The same actions on the leaves of an adaptive mesh (amr_operation.cpp): "hydro_update" as the
// adaptive step's update of the item's box (its leaf's cell size, the fluxes at level jumps
// recorded for whole leaves), "diagnostics" with each leaf's cell volume, and "cell_dt" left to
// the fill cycle before the next step, which finds the time step of the corrected state.
plan::ActionRegistry amr_action_registry(HydroStepState& state, HydroStepHooks hooks);
// What both registries share: the fill hooks and the reductions, through `hooks`.
void add_step_hooks(plan::ActionRegistry& registry, HydroStepState& state, HydroStepHooks hooks);

class HydroOperation {
 public:
  // Plans `operation` for a runtime of `shape` (every pipeline on host teams: the bodies work on
  // the grid's host data; with `adaptive`, on a ForestMesh's leaves). Throws korch::Error naming the
  // action when the operation names one the registry lacks.
  HydroOperation(plan::Operation operation, const RuntimeShape& shape, HydroStepHooks hooks, int n_blocks,
                 bool adaptive = false);

  const plan::Operation& operation() const noexcept { return operation_; }
  const plan::Plan& plan() const noexcept { return plan_; }
  bool has_action(const std::string& name) const;
  // One step from the state set euler.state into euler.next_state: every step of the plan, on
  // `source` (korch::Grid, or with `amr` the leaves of amr->mesh, whose number may change between
  // steps).
  void run(Runtime& runtime, DataSource& source, const EulerParams& euler, BlockDiagnostics* diagnostics,
           double cell_volume, const AmrStepParameters* amr = nullptr);

 private:
  plan::Operation operation_;
  std::unique_ptr<HydroStepState> state_;  // the bodies hold its address
  plan::Plan plan_;
  std::unique_ptr<plan::Executor> executor_;
};

}  // namespace korch::hydro
