// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/bundle.hpp>
#include <korch/error.hpp>
#include <korch/plan/executor.hpp>
#include <korch/plan/plan_check.hpp>
#include <korch/plan/stage_routine.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

namespace korch::plan {

Executor::Executor(const Operation& operation, ActionBodies bodies, ExecutionHooks hooks)
    : Executor(operation, std::move(bodies), DeviceActionBodies{}, std::move(hooks)) {}

Executor::Executor(const Operation& operation, ActionBodies bodies, DeviceActionBodies device_bodies,
                   ExecutionHooks hooks)
    : operation_(operation),
      graph_(std::make_shared<const KernelGraph>(operation)),
      digest_(operation_digest(operation)),
      bodies_(std::move(bodies)),
      device_bodies_(std::move(device_bodies)),
      hooks_(std::move(hooks)) {
  for (const auto& [name, body] : device_bodies_) {
    bool known = false;
    for (const ActionDeclaration* a : operation_.actions()) known = known || a->action == name;
    if (!known || !body)
      throw Error::format("operation '{}': a device body is given for '{}', which {}", operation_.name, name,
                          known ? "is empty: give a callable or leave the action out" : "is not one of its actions");
  }
  for (const ActionDeclaration* a : operation_.actions()) {
    const auto it = bodies_.find(a->action);
    if (it == bodies_.end() || !it->second)
      throw Error::format("operation '{}': action '{}': no body given: add one to the ActionBodies", operation_.name,
                          a->action);
  }
  for (const auto& [name, body] : bodies_) {
    bool known = false;
    for (const ActionDeclaration* a : operation_.actions()) known = known || a->action == name;
    if (!known)
      throw Error::format("operation '{}': a body is given for '{}', which is not one of its actions", operation_.name,
                          name);
  }
}

void Executor::check_source(const DataSource& source) const {
  if (source.n_vars() < static_cast<int>(operation_.variables.size())) {
    throw Error::format("operation '{}' has {} variables but the {} only {}: give it n_vars >= {}", operation_.name,
                        operation_.variables.size(), source.source_name(), source.n_vars(),
                        operation_.variables.size());
  }
  const int guard = narrowest_guard(source);
  const std::vector<int> levels = levels_of(source);
  for (const ActionDeclaration* a : operation_.actions()) {
    for (std::size_t r = 0; r < a->reads.size(); ++r) {
      if (a->reads[r].stencil > guard) {
        throw Error::format("operation '{}': action '{}': field reads[{}].stencil: {} guard cells, but the {} has {}",
                            operation_.name, a->action, r, a->reads[r].stencil, source.source_name(), guard);
      }
    }
    if (a->iterator.kind == IteratorKind::level &&
        std::find(levels.begin(), levels.end(), a->iterator.level) == levels.end()) {
      throw Error::format(
          "operation '{}': action '{}': field iterator.level: the {} has no block on level {} (its "
          "levels: {})",
          operation_.name, a->action, source.source_name(), a->iterator.level, fmt::join(levels, ", "));
    }
  }
}

// The stage's device bodies when every action of it has one (otherwise none: the host bodies run).
DeviceStage Executor::device_stage(const Plan& plan, const Stage& stage) const {
  DeviceStage device;
  for (const auto& name : stage.actions) {
    const auto it = device_bodies_.find(name);
    if (it == device_bodies_.end()) return DeviceStage{};
    device.bodies.push_back(it->second);
  }
  const ActionDeclaration declaration = stage_declaration(plan, stage);
  for (const auto& r : declaration.reads) device.reads.push_back(operation_.variable_index(r.variable));
  device.writes = indices(declaration.writes);
  return device;
}

std::vector<int> Executor::indices(const std::vector<std::string>& variables) const {
  std::vector<int> out;
  for (const auto& v : variables) out.push_back(operation_.variable_index(v));
  return out;
}

namespace {

void need(bool present, const std::string& operation, const char* hook, const std::string& why) {
  if (!present)
    throw Error::format("operation '{}': the plan needs {} but ExecutionHooks::{} is empty: give one", operation, why,
                        hook);
}

}  // namespace

std::shared_ptr<const Executor::BuiltBundle> Executor::bundle_for(const Plan& plan, std::size_t step,
                                                                  DataSource& source) const {
  const PlannedBundle& planned = plan.steps[step].bundle;
  // The bundle's name, then each stage's routine and actions: what the kept routines were built from.
  auto for_each_name = [&planned](auto&& f) {
    f(planned.name);
    for (const auto& pipeline : planned.pipelines)
      for (const auto& stage : pipeline.stages) {
        f(stage.routine);
        for (const auto& a : stage.actions) f(a);
      }
  };
  const std::lock_guard<std::mutex> lock(built_mutex_);
  auto& have = built_[step];
  if (have && have->source == &source && have->operation == plan.operation) {
    std::size_t i = 0;
    bool same = true;
    for_each_name([&](const std::string& name) {
      same = same && i < have->stage_names.size() && have->stage_names[i] == name;
      ++i;
    });
    if (same && i == have->stage_names.size()) return have;
  }
  std::vector<std::string> names;
  for_each_name([&names](const std::string& name) { names.push_back(name); });
  auto built = std::make_shared<BuiltBundle>();
  built->source = &source;
  built->operation = plan.operation;
  built->stage_names = std::move(names);
  built->bundle = Bundle(planned.name);
  std::set<std::string> added;
  for (const auto& pipeline : planned.pipelines) {
    for (const auto& stage : pipeline.stages) {
      if (!added.insert(stage.routine).second) continue;
      std::vector<ActionBody> bodies;
      for (const auto& name : stage.actions) {
        const auto it = bodies_.find(name);
        if (it == bodies_.end()) {
          throw Error::format(
              "plan of '{}', bundle '{}': action '{}' is not an action of operation '{}': plan this "
              "operation again",
              plan.operation, planned.name, name, operation_.name);
        }
        bodies.push_back(it->second);
      }
      built->bundle.add(stage_routine(stage.routine, std::move(bodies), device_stage(plan, stage), source,
                                      stage_declaration(plan, stage)));
    }
  }
  have = built;
  return built;
}

void Executor::run(const Plan& plan, Runtime& runtime, DataSource& source,
                   const std::function<void(const PlannedBundle&)>& after_bundle) const {
  check_plan(*graph_, plan, digest_);
  check_source(source);
  // Fills that directly precede a bundle wait for it when the hooks can fill inside its cycle.
  std::vector<int> pending;
  auto fill_pending = [&] {
    if (pending.empty()) return;
    need(static_cast<bool>(hooks_.fill_guards), operation_.name, "fill_guards", "a guard-cell fill");
    hooks_.fill_guards(source, pending);
    pending.clear();
  };
  for (const auto& step : plan.steps) {
    if (step.kind == StepKind::guard_fill) {
      for (int v : indices(step.variables))
        if (std::find(pending.begin(), pending.end(), v) == pending.end()) pending.push_back(v);
      if (!hooks_.filling_order) fill_pending();
      continue;
    }
    if (step.kind != StepKind::bundle) fill_pending();
    if (step.kind == StepKind::reduction) {
      need(static_cast<bool>(hooks_.reduce), operation_.name, "reduce", "the reduction '" + step.name + "'");
      hooks_.reduce(source, step.name, indices(step.variables));
      continue;
    }
    // Held for the cycle: another thread's run may replace the kept one meanwhile.
    const auto built = bundle_for(plan, static_cast<std::size_t>(&step - plan.steps.data()), source);
    BlockIterator* order = nullptr;
    if (!pending.empty()) {
      order = hooks_.filling_order(source, pending);
      if (!order)
        throw Error::format(
            "operation '{}': ExecutionHooks::filling_order gave no block order for the fill before bundle "
            "'{}': return one, or leave the hook empty",
            operation_.name, step.bundle.name);
      pending.clear();
    }
    runtime.execute(built->bundle, step.bundle.configuration, source, order);
    if (after_bundle) after_bundle(step.bundle);
  }
  fill_pending();
}

void Executor::run_sequentially(const KernelGraph& graph, DataSource& source) const {
  check_source(source);
  std::set<std::string> dirty(operation_.variables.begin(), operation_.variables.end());
  std::size_t barrier = 0;
  const auto& barriers = graph.barriers();
  auto barriers_at = [&](int position) {
    for (; barrier < barriers.size() && barriers[barrier].after_action == position; ++barrier) {
      const GraphBarrier& b = barriers[barrier];
      if (b.removed) continue;
      if (b.barrier.kind == BarrierKind::guard_fill) {
        need(static_cast<bool>(hooks_.fill_guards), operation_.name, "fill_guards", "a guard-cell fill");
        hooks_.fill_guards(source, indices(b.barrier.variables));
        for (const auto& v : b.barrier.variables) dirty.erase(v);
      } else {
        need(static_cast<bool>(hooks_.reduce), operation_.name, "reduce", "the reduction '" + b.barrier.name + "'");
        hooks_.reduce(source, b.barrier.name, indices(b.barrier.variables));
      }
    }
  };
  const auto& actions = graph.actions();
  for (std::size_t i = 0; i < actions.size(); ++i) {
    barriers_at(static_cast<int>(i));
    const ActionDeclaration& a = actions[i];
    std::vector<std::string> fill;
    for (const auto& r : a.reads)
      if (r.stencil > 0 && dirty.count(r.variable)) fill.push_back(r.variable);
    if (!fill.empty()) {
      need(static_cast<bool>(hooks_.fill_guards), operation_.name, "fill_guards", "a guard-cell fill");
      hooks_.fill_guards(source, indices(fill));
      for (const auto& v : fill) dirty.erase(v);
    }
    const ActionBody& body = bodies_.at(a.action);
    for (int b = 0; b < source.n_blocks(); ++b) body(source, b, source.block(b).interior);
    for (const auto& w : a.writes) dirty.insert(w);
  }
  barriers_at(static_cast<int>(actions.size()));
}

}  // namespace korch::plan
