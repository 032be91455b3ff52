// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The task scheduler (docs/planner.md, "Scheduling"): turns a kernel graph into a plan. Actions
// are taken in program order, epoch by epoch; a bundle starts with the first action not yet placed
// and takes every later action of the same iterator whose dependences are all on actions already
// placed, or on actions in the bundle through non-barrier edges, as long as the bundle still fits
// the runtime's teams. Each bundle's dependent actions form one pipeline (connected components of
// its dependences, in program order); each pipeline is placed by the cost model; short actions are
// fused with their neighbour in the pipeline, and further neighbours are fused while the bundle
// needs more teams than the runtime has.
#pragma once

#include <korch/configuration.hpp>
#include <korch/plan/cost_model.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/plan.hpp>

namespace korch::plan {

struct SchedulerOptions {
  RuntimeShape shape{6, 4, 6, 2};  // the default Runtime on a machine of up to 4 cores (docs/runtime-sizing.md)
  CostModel cost;
  bool fuse_short = true;
  unsigned threads_per_stage = 0;  // a team's initial threads; 0: all of the runtime's team threads
};

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options = {});
  // Throws korch::Error naming the action when one cannot be placed at all (device_only without
  // devices).
  Plan plan(const KernelGraph& graph) const;

 private:
  SchedulerOptions options_;
};

}  // namespace korch::plan
