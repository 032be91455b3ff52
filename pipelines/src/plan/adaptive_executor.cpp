// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/plan/adaptive_executor.hpp>

#include <chrono>

namespace korch::plan {

namespace {

// Detaches the trace however the step ends.
struct TraceAttachment {
  TraceAttachment(Runtime& runtime, Trace& trace) : runtime(runtime) { runtime.set_trace(&trace); }
  ~TraceAttachment() { runtime.set_trace(nullptr); }
  TraceAttachment(const TraceAttachment&) = delete;
  TraceAttachment& operator=(const TraceAttachment&) = delete;
  Runtime& runtime;
};

Plan plan_of(const Operation& operation, const SchedulerOptions& options, double& seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  Plan plan = Scheduler(options).plan(KernelGraph(operation));
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return plan;
}

}  // namespace

AdaptiveExecutor::AdaptiveExecutor(const Operation& operation, ActionBodies bodies, ExecutionHooks hooks,
                                   AdaptiveOptions options)
    : operation_(operation), executor_(operation, std::move(bodies), std::move(hooks)), options_(std::move(options)) {
  if (options_.replan_every < 1) {
    throw Error::format("adaptive executor of '{}': option replan_every is {}: give 1 or more steps", operation_.name,
                        options_.replan_every);
  }
  if (!(options_.smoothing > 0.0 && options_.smoothing <= 1.0)) {
    throw Error::format("adaptive executor of '{}': option smoothing is {}: give a weight in (0, 1]", operation_.name,
                        options_.smoothing);
  }
  plan_ = plan_of(operation_, options_.scheduler, planning_seconds_);
}

void AdaptiveExecutor::step(Runtime& runtime, DataSource& source) {
  Trace trace;
  {
    TraceAttachment attached(runtime, trace);
    executor_.run(plan_, runtime, source, [&](const PlannedBundle& bundle) {
      window_.add(bundle, trace.events(), source, plan_.actions, options_.scheduler.cost);
      trace.clear();
    });
  }
  ++steps_;
  if (steps_ % options_.replan_every == 0) replan();
}

void AdaptiveExecutor::replan() {
  const double w = options_.smoothing;
  for (const auto& [name, cost] : window_.costs()) {
    MeasuredCost& m = measured_[name];
    if (cost.host > 0) m.host = m.host > 0 ? (1 - w) * m.host + w * cost.host : cost.host;
    if (cost.device > 0) m.device = m.device > 0 ? (1 - w) * m.device + w * cost.device : cost.device;
  }
  window_.clear();
  // The hints of the operation as declared are the model's costs for the sides never measured.
  plan_ = plan_of(with_measured_costs(operation_, measured_, options_.scheduler.cost), options_.scheduler,
                  planning_seconds_);
  ++replans_;
}

}  // namespace korch::plan
