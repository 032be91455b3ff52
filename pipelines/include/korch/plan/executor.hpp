// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Running an operation (docs/planner.md, "Execution"): a plan bundle by bundle on a
// korch::Runtime over any data source (a korch::Grid, a physics code's BlockList), or sequentially in program order as
// the reference a plan must reproduce. The application gives each action's body, which works on a box of one block (a
// tile, or the block's interior), and hooks for the work between bundles.
#pragma once

#include <korch/block_iterator.hpp>
#include <korch/bundle.hpp>
#include <korch/data_source.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/plan.hpp>
#include <korch/plan/stage_routine.hpp>
#include <korch/runtime.hpp>

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace korch::plan {

// Each action's body by the action's name (ActionBody: stage_routine.hpp).
using ActionBodies = std::map<std::string, ActionBody>;
// Device bodies by action name (DeviceActionBody: stage_routine.hpp), for some actions or all.
using DeviceActionBodies = std::map<std::string, DeviceActionBody>;

struct ExecutionHooks {
  // Fills the guard cells of these variables (source indices) of every block.
  std::function<void(DataSource& source, const std::vector<int>& variables)> fill_guards;
  // A reduction barrier: `name` over these variables (source indices).
  std::function<void(DataSource& source, const std::string& name, const std::vector<int>& variables)> reduce;
  // Optional: an order of the next bundle's blocks that fills these variables' guard cells during
  // the cycle, handing out each block once its own are valid (korch::GuardCellIterator), so that
  // the fill overlaps the bundle's work. Given, a fill directly before a bundle runs this way (in
  // Executor::run and in generated drivers; the sequential reference calls fill_guards).
  std::function<BlockIterator*(DataSource& source, const std::vector<int>& variables)> filling_order;
};

class Executor {
 public:
  // Checks that every action has a body, that the source has the operation's variables and enough
  // guard cells for every stencil, and that level iterators name the source's level; throws
  // korch::Error naming the action and field otherwise.
  Executor(const Operation& operation, ActionBodies bodies, ExecutionHooks hooks);
  // With device bodies: a stage whose every action has one runs them on its device teams' blocks
  // where the source keeps them in device memory (a resident grid, a BlockList of device arrays;
  // docs/planner.md, "Device bodies"); other stages run the host bodies everywhere. A device body
  // for an action the operation does not have is an error naming it.
  Executor(const Operation& operation, ActionBodies bodies, DeviceActionBodies device_bodies, ExecutionHooks hooks);

  // Checks the plan against the operation (check_plan: its digest, every action once, dependences,
  // fills, sides; a korch::Error naming the first difference), then runs every step of it: one Runtime::execute per
  // bundle, with routines that carry their declarations (so the runtime checks them), and the hooks between bundles (a
  // guard fill directly before a bundle inside its cycle when hooks.filling_order is given). A bundle's routines are
  // built once and kept for the next run while the plan's bundle has the same stages and the source is the same one
  // (docs/planner.md, "Execution"). `after_bundle`, when given, is called after each bundle's cycle (the dynamic mode
  // reads the cycle's trace there).
  void run(const Plan& plan, Runtime& runtime, DataSource& source,
           const std::function<void(const PlannedBundle&)>& after_bundle = {}) const;
  // The reference: every action on every block in program order; before an action, the guard cells
  // it reads with a stencil are filled if written since their last fill; barriers as written.
  void run_sequentially(const KernelGraph& graph, DataSource& source) const;

 private:
  // The routines of a planned bundle, kept between runs: a step's work is then only the cycle.
  struct BuiltBundle {
    const DataSource* source = nullptr;
    std::string operation;                 // the plan's
    std::vector<std::string> stage_names;  // the bundle's name, then each stage's routine and actions
    Bundle bundle;
  };
  std::shared_ptr<const BuiltBundle> bundle_for(const Plan& plan, std::size_t step, DataSource& source) const;
  void check_source(const DataSource& source) const;
  std::vector<int> indices(const std::vector<std::string>& variables) const;
  Operation operation_;
  std::shared_ptr<const KernelGraph> graph_;  // what each plan is checked against (plan_check.hpp)
  std::string digest_;                        // operation_digest(operation_)
  DeviceStage device_stage(const Plan& plan, const Stage& stage) const;
  ActionBodies bodies_;
  DeviceActionBodies device_bodies_;
  ExecutionHooks hooks_;
  mutable std::mutex built_mutex_;                                           // run may be called from several threads
  mutable std::map<std::size_t, std::shared_ptr<const BuiltBundle>> built_;  // by the step's index in its plan
};

}  // namespace korch::plan
