// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The routine of one plan stage (docs/planner.md, "Plans and execution"): the stage's action bodies
// applied in order to the box of the item a team hands it (a tile, a block's interior, or for
// action metadata the interior of its block), declared with everything the actions read and write
// so that the runtime checks the plan. Shared by the Executor and by generated drivers.
#pragma once

#include <korch/action_routine.hpp>
#include <korch/data_source.hpp>
#include <korch/plan/plan.hpp>

#include <functional>
#include <string>
#include <vector>

namespace korch::plan {

// Applies an action to the cells of `box` (block-local indices) of block `block`. Reads may reach
// `stencil` cells beyond the box; writes stay inside it.
using ActionBody = std::function<void(DataSource& source, int block, const Box& box)>;

// The union of the stage's actions' declarations under the stage's routine name (a variable read
// by several actions keeps its widest stencil).
ActionDeclaration stage_declaration(const Plan& plan, const Stage& stage);

// The stage routine `name`: `bodies` in order on each item's box of `source`, declared `declaration`.
// An item of another kind is an error naming it.
ActionRoutine stage_routine(const std::string& name, std::vector<ActionBody> bodies, DataSource& source,
                            ActionDeclaration declaration);

}  // namespace korch::plan
