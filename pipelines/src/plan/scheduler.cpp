// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "bundle_growth.hpp"
#include "bundle_layout.hpp"

#include <korch/error.hpp>
#include <korch/plan/plan_check.hpp>
#include <korch/plan/scheduler.hpp>

#include <fmt/format.h>

#include <set>

namespace korch::plan {

Scheduler::Scheduler(SchedulerOptions options) : options_(std::move(options)) {}

namespace {

// Adds the operation's barriers that were not removed and that follow at most `actions` actions,
// in order, from `next` on (the steps between epochs; every barrier is added once).
void add_barrier_steps(const KernelGraph& graph, int actions, std::size_t& next, Plan& plan,
                       std::set<std::string>& dirty) {
  const auto& barriers = graph.barriers();
  for (; next < barriers.size() && barriers[next].after_action <= actions; ++next) {
    const GraphBarrier& b = barriers[next];
    if (b.removed) continue;
    PlanStep s;
    s.kind = b.barrier.kind == BarrierKind::guard_fill ? StepKind::guard_fill : StepKind::reduction;
    s.variables = b.barrier.variables;
    s.name = b.barrier.name;
    if (s.kind == StepKind::guard_fill)
      for (const auto& v : s.variables) dirty.erase(v);
    plan.steps.push_back(std::move(s));
  }
}

// Whether every dependence of `action` is on an action already placed, or on a member of the
// bundle through a plain (non-barrier) edge.
bool ready(const KernelGraph& graph, int action, const std::vector<bool>& done, const detail::BundleGrowth& bundle) {
  for (int d : graph.into(action)) {
    const Dependence& dep = graph.dependences()[static_cast<std::size_t>(d)];
    if (!done[static_cast<std::size_t>(dep.from)] && (dep.barrier || !bundle.contains(dep.from))) return false;
  }
  return true;
}

}  // namespace

// Each action is tried once per bundle of its epoch; trying it places the one pipeline it would
// join (O(k²) for a pipeline of k actions, cost_model.cpp), and each finished bundle is laid out
// once (docs/planner.md, "Scheduling": the complexity).
Plan Scheduler::plan(const KernelGraph& graph) const {
  const auto& actions = graph.actions();
  const int n = static_cast<int>(actions.size());
  Plan plan;
  plan.operation = graph.operation().name;
  plan.operation_digest = operation_digest(graph.operation());
  plan.actions = actions;
  for (const auto& a : actions) {
    if (a.hints.device_only && !options_.cost.devices) {
      throw Error::format(
          "operation '{}': action '{}': field hints.device_only: the scheduler was told there are no "
          "devices: allow devices or drop the hint",
          plan.operation, a.action);
    }
  }
  // Every variable starts with guard cells never filled (see docs/planner.md, "Guard-cell fills").
  std::set<std::string> dirty(graph.operation().variables.begin(), graph.operation().variables.end());
  std::vector<bool> done(actions.size(), false);
  detail::BundleGrowth growth(graph, options_);
  std::size_t next_barrier = 0, bundles = 0;
  int placed = 0, seed = 0;
  int epoch = 0;
  add_barrier_steps(graph, 0, next_barrier, plan, dirty);
  while (placed < n) {
    while (done[static_cast<std::size_t>(seed)]) ++seed;
    if (graph.epoch(seed) != epoch) {
      // Barriers sit between epochs: add those that follow the last action of this epoch.
      add_barrier_steps(graph, seed, next_barrier, plan, dirty);
      epoch = graph.epoch(seed);
      continue;
    }
    if (!growth.start(seed)) {
      throw Error::format("operation '{}': action '{}' does not fit a runtime of {} teams: raise n_teams",
                          plan.operation, actions[static_cast<std::size_t>(seed)].action, options_.shape.n_teams);
    }
    for (int x = seed + 1; x < n && graph.epoch(x) == epoch; ++x) {
      if (done[static_cast<std::size_t>(x)] ||
          actions[static_cast<std::size_t>(x)].iterator != actions[static_cast<std::size_t>(seed)].iterator)
        continue;
      if (ready(graph, x, done, growth)) growth.try_add(x);
    }
    const std::vector<int> members = growth.members();
    auto layout = detail::lay_out(graph, members, options_);
    if (!layout) {
      throw Error::format(
          "operation '{}': the bundle of '{}' and {} more actions fits by its pipelines' parts but not "
          "laid out: a scheduler fault, please report it with the operation file",
          plan.operation, actions[static_cast<std::size_t>(seed)].action, members.size() - 1);
    }
    // Guard cells read with a stencil in this bundle and written since their last fill.
    std::set<std::string> fill;
    for (int m : members)
      for (const auto& r : actions[static_cast<std::size_t>(m)].reads)
        if (r.stencil > 0 && dirty.count(r.variable)) fill.insert(r.variable);
    if (!fill.empty()) {
      PlanStep s;
      s.kind = StepKind::guard_fill;
      s.variables.assign(fill.begin(), fill.end());
      for (const auto& v : fill) dirty.erase(v);
      plan.steps.push_back(std::move(s));
    }
    PlanStep s;
    s.bundle.name = fmt::format("{}_bundle{}", plan.operation, bundles++);
    s.bundle.iterator = actions[static_cast<std::size_t>(seed)].iterator;
    s.bundle.pipelines = std::move(*layout);
    s.bundle.configuration = detail::make_configuration(s.bundle.name, s.bundle.pipelines, options_);
    plan.steps.push_back(std::move(s));
    for (int m : members) {
      done[static_cast<std::size_t>(m)] = true;
      for (const auto& w : actions[static_cast<std::size_t>(m)].writes) dirty.insert(w);
    }
    placed += static_cast<int>(members.size());
  }
  add_barrier_steps(graph, n, next_barrier, plan, dirty);
  return plan;
}

}  // namespace korch::plan
