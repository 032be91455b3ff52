// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Dynamic mode (docs/planner.md, "Dynamic mode"): runs an operation step after step, each step one
// execution of the current plan with the runtime's trace recording every task; every
// `replan_every` steps the measured costs replace the hints in the cost model and the operation is
// planned again. Results do not depend on the plan: every plan gives what program order gives.
#pragma once

#include <korch/plan/cost_measurement.hpp>
#include <korch/plan/executor.hpp>
#include <korch/plan/scheduler.hpp>

#include <map>
#include <string>

namespace korch::plan {

struct AdaptiveOptions {
  SchedulerOptions scheduler;
  int replan_every = 10;   // steps between plans (>= 1)
  double smoothing = 0.5;  // weight of the newest window's costs against the ones measured before (0, 1]
};

class AdaptiveExecutor {
 public:
  // Plans the operation from its hints. Throws korch::Error naming the option when replan_every or
  // smoothing is out of range, and what Executor throws for missing bodies.
  AdaptiveExecutor(const Operation& operation, ActionBodies bodies, ExecutionHooks hooks, AdaptiveOptions options);

  // One step: runs the current plan on `runtime` with a trace attached (the runtime's trace is
  // detached afterwards), adds the tasks' times to the window, and plans again when the window is
  // `replan_every` steps long.
  void step(Runtime& runtime, DataSource& source);

  const Plan& plan() const noexcept { return plan_; }
  int steps() const noexcept { return steps_; }
  int replans() const noexcept { return replans_; }
  double last_planning_seconds() const noexcept { return planning_seconds_; }
  // Seconds per block of each action, smoothed over the windows so far.
  const std::map<std::string, MeasuredCost>& measured() const noexcept { return measured_; }

 private:
  void replan();
  Operation operation_;
  Executor executor_;
  AdaptiveOptions options_;
  Plan plan_;
  CostMeasurement window_;
  std::map<std::string, MeasuredCost> measured_;
  int steps_ = 0;
  int replans_ = 0;
  double planning_seconds_ = 0.0;
};

}  // namespace korch::plan
