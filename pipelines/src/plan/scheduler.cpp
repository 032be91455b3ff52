#include "bundle_layout.hpp"

#include <korch/error.hpp>
#include <korch/plan/scheduler.hpp>

#include <fmt/format.h>

#include <set>

namespace korch::plan {

Scheduler::Scheduler(SchedulerOptions options) : options_(std::move(options)) {}

namespace {

// Adds the steps between epochs: the operation's barriers that were not removed, in order.
void add_barrier_steps(const KernelGraph& graph, int after_action, Plan& plan, std::set<std::string>& dirty) {
  for (const auto& b : graph.barriers()) {
    if (b.removed || b.after_action != after_action) continue;
    PlanStep s;
    s.kind = b.barrier.kind == BarrierKind::guard_fill ? StepKind::guard_fill : StepKind::reduction;
    s.variables = b.barrier.variables;
    s.name = b.barrier.name;
    if (s.kind == StepKind::guard_fill)
      for (const auto& v : s.variables) dirty.erase(v);
    plan.steps.push_back(std::move(s));
  }
}

}  // namespace

Plan Scheduler::plan(const KernelGraph& graph) const {
  const auto& actions = graph.actions();
  const int n = static_cast<int>(actions.size());
  Plan plan;
  plan.operation = graph.operation().name;
  plan.actions = actions;
  for (const auto& a : actions) {
    if (a.hints.device_only && !options_.cost.devices) {
      throw Error::format("operation '{}': action '{}': field hints.device_only: the scheduler was told there are no "
                          "devices: allow devices or drop the hint",
                          plan.operation, a.action);
    }
  }
  // Every variable starts with guard cells never filled (see docs/planner.md, "Guard-cell fills").
  std::set<std::string> dirty(graph.operation().variables.begin(), graph.operation().variables.end());
  std::vector<bool> done(actions.size(), false);
  int placed = 0;
  int epoch = 0;
  add_barrier_steps(graph, 0, plan, dirty);
  while (placed < n) {
    int seed = 0;
    while (done[static_cast<std::size_t>(seed)]) ++seed;
    if (graph.epoch(seed) != epoch) {
      // Barriers sit between epochs: add those that follow the last action of this epoch.
      for (int a = 0; a < n; ++a)
        if (graph.epoch(a) == epoch) add_barrier_steps(graph, a + 1, plan, dirty);
      epoch = graph.epoch(seed);
      continue;
    }
    std::vector<int> members{seed};
    std::vector<bool> in_bundle(actions.size(), false);
    in_bundle[static_cast<std::size_t>(seed)] = true;
    auto layout = detail::lay_out(graph, members, options_);
    if (!layout) {
      throw Error::format("operation '{}': action '{}' does not fit a runtime of {} teams: raise n_teams", plan.operation,
                          actions[static_cast<std::size_t>(seed)].action, options_.shape.n_teams);
    }
    for (int x = seed + 1; x < n && graph.epoch(x) == epoch; ++x) {
      if (done[static_cast<std::size_t>(x)] || actions[static_cast<std::size_t>(x)].iterator != actions[static_cast<std::size_t>(seed)].iterator) continue;
      bool ready = true;
      for (int d : graph.into(x)) {
        const Dependence& dep = graph.dependences()[static_cast<std::size_t>(d)];
        const bool ok = done[static_cast<std::size_t>(dep.from)] || (in_bundle[static_cast<std::size_t>(dep.from)] && !dep.barrier);
        ready = ready && ok;
      }
      if (!ready) continue;
      members.push_back(x);
      auto bigger = detail::lay_out(graph, members, options_);
      if (!bigger) {
        members.pop_back();
        continue;
      }
      layout = std::move(bigger);
      in_bundle[static_cast<std::size_t>(x)] = true;
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
    s.bundle.name = fmt::format("{}_bundle{}", plan.operation, plan.bundles().size());
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
  for (int a = 0; a < n; ++a)
    if (graph.epoch(a) == epoch) add_barrier_steps(graph, a + 1, plan, dirty);
  return plan;
}

}  // namespace korch::plan
