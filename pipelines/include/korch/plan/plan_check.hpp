// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Whether a plan is a plan of an operation (docs/planner.md, "Checking a plan"): a plan file may
// be kept, edited, truncated or meant for another operation, and a plan that runs wrong would
// exit 0. The Executor (and so the AdaptiveExecutor) and the driver generator check every plan
// against its operation before anything runs.
#pragma once

#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/operation.hpp>
#include <korch/plan/plan.hpp>

#include <string>

namespace korch::plan {

// A stable hash (FNV-1a, 64 bits, as 16 hex digits) of what a plan must agree with: the
// operation's canonical JSON without its cost guesses (short, heavy, cost, measured), which only
// steer where actions run and which a re-plan from measurements changes. Its name, variables,
// parameters, barriers and the actions' reads, writes, items, iterators and host_only/device_only
// are all in it.
std::string operation_digest(const Operation& operation);

// Throws korch::Error ("plan of 'op': step 3 (bundle 'op_bundle1'): field pipelines[0].stages[1]:
// ...") naming the first difference between `plan` and the operation of `graph`:
// - the operation's name and digest (field operation, operation_digest);
// - the declarations (field actions[i]): the operation's, in order, costs aside;
// - every action exactly once, in no empty bundle, pipeline or stage, in a bundle of its iterator;
// - every dependence kept: on an action of an earlier bundle, or, through a plain edge, on an
//   earlier action of the same pipeline; every barrier's work between the actions it separates;
// - every stencil read of a variable written since its last fill preceded by a guard fill;
// - fills and reductions of known variables, reductions the operation's own, in order;
// - host_only actions on host teams, device_only ones on device teams, and each stage run by the
//   configuration's teams the pipeline names (items of the stage's side, the stage's routine).
void check_plan(const KernelGraph& graph, const Plan& plan);
// The same with the operation's digest computed before (a plan run every step checks it each time).
void check_plan(const KernelGraph& graph, const Plan& plan, const std::string& digest);

}  // namespace korch::plan
