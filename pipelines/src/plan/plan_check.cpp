// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/plan/plan_check.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

namespace korch::plan {

namespace {

// The declaration without the guesses that only steer placement.
ActionDeclaration without_costs(ActionDeclaration a) {
  const bool host_only = a.hints.host_only, device_only = a.hints.device_only;
  a.hints = ActionHints{};
  a.hints.host_only = host_only;
  a.hints.device_only = device_only;
  return a;
}

// Where in the plan each action runs.
struct Slot {
  int step = -1;
  std::size_t pipeline = 0, stage = 0, position = 0;
};

struct PlanWalk {
  const KernelGraph& graph;
  const Plan& plan;
  std::string who;  // "plan of 'op'"
  std::vector<Slot> slots;

  [[noreturn]] void fail(int step, const std::string& what) const {
    const PlanStep& s = plan.steps[static_cast<std::size_t>(step)];
    const std::string label = s.kind == StepKind::bundle      ? fmt::format(" (bundle '{}')", s.bundle.name)
                              : s.kind == StepKind::reduction ? fmt::format(" (reduction '{}')", s.name)
                                                              : std::string(" (guard_fill)");
    throw Error::format("{}: step {}{}: {}", who, step, label, what);
  }

  void check_variables(int step, const std::vector<std::string>& variables, const char* field) const {
    for (std::size_t v = 0; v < variables.size(); ++v)
      if (graph.operation().variable_index(variables[v]) < 0)
        fail(step, fmt::format("field {}[{}]: unknown variable '{}': the operation's are {}", field, v, variables[v],
                               fmt::join(graph.operation().variables, ", ")));
  }

  void place_actions(int step) {
    const PlannedBundle& b = plan.steps[static_cast<std::size_t>(step)].bundle;
    if (b.pipelines.empty()) fail(step, "field pipelines: empty: a bundle runs at least one action");
    for (std::size_t p = 0; p < b.pipelines.size(); ++p) {
      const auto& stages = b.pipelines[p].stages;
      if (stages.empty()) fail(step, fmt::format("field pipelines[{}].stages: empty", p));
      for (std::size_t s = 0; s < stages.size(); ++s) {
        const std::string field = fmt::format("field pipelines[{}].stages[{}]", p, s);
        if (stages[s].actions.empty()) fail(step, field + ": empty: a stage runs at least one action");
        for (std::size_t k = 0; k < stages[s].actions.size(); ++k) {
          const std::string& name = stages[s].actions[k];
          const int a = graph.find(name);
          if (a < 0)
            fail(step, fmt::format("{}: action '{}' is not an action of operation '{}'", field, name,
                                   graph.operation().name));
          Slot& slot = slots[static_cast<std::size_t>(a)];
          if (slot.step >= 0)
            fail(step, fmt::format("{}: action '{}' runs twice (first in step {})", field, name, slot.step));
          slot = Slot{step, p, s, k};
          const ActionDeclaration& d = graph.actions()[static_cast<std::size_t>(a)];
          if (d.iterator != b.iterator)
            fail(step, fmt::format("{}: action '{}' walks {} but the bundle {}", field, name, d.iterator.describe(),
                                   b.iterator.describe()));
          const Placement side = stages[s].placement;
          if (d.hints.host_only && side != Placement::host)
            fail(step, fmt::format("{}: action '{}' is host_only but the stage runs {}", field, name,
                                   side == Placement::split ? "split, partly on a device" : "on a device"));
          if (d.hints.device_only && side != Placement::device)
            fail(step, fmt::format("{}: action '{}' is device_only but the stage runs {}", field, name,
                                   side == Placement::split ? "split, partly on the host" : "on the host"));
        }
      }
    }
  }

  // Each stage's teams, as the pipeline names them, run its routine on items of its side.
  void check_teams(int step) const {
    const PlannedBundle& b = plan.steps[static_cast<std::size_t>(step)].bundle;
    std::map<std::string, const TeamConfig*> teams;
    for (const auto& t : b.configuration.teams) teams[t.name] = &t;
    std::set<std::string> used;
    for (std::size_t p = 0; p < b.pipelines.size(); ++p) {
      const PlannedPipeline& pl = b.pipelines[p];
      for (std::size_t s = 0; s < pl.stages.size(); ++s) {
        const Stage& stage = pl.stages[s];
        const bool host = stage.placement != Placement::device, device = stage.placement != Placement::host;
        for (const bool on_device : {false, true}) {
          const auto& names = on_device ? pl.device_teams : pl.host_teams;
          const char* list = on_device ? "device_teams" : "host_teams";
          const std::string name = s < names.size() ? names[s] : "";
          const bool wanted = on_device ? device : host;
          const std::string field = fmt::format("field pipelines[{}].{}[{}]", p, list, s);
          if (!wanted) {
            if (!name.empty())
              fail(step, fmt::format("{}: team '{}' for a stage placed {}", field, name, to_string(stage.placement)));
            continue;
          }
          if (name.empty())
            fail(step,
                 fmt::format("{}: no team for stage '{}' placed {}", field, stage.routine, to_string(stage.placement)));
          const auto it = teams.find(name);
          if (it == teams.end())
            fail(step, fmt::format("{}: team '{}' is not in the bundle's configuration", field, name));
          const TeamConfig& t = *it->second;
          if (t.action != stage.routine)
            fail(step, fmt::format("{}: team '{}' runs '{}', not the stage's routine '{}'", field, name, t.action,
                                   stage.routine));
          if ((t.type == DataType::action_metadata) != on_device)
            fail(step, fmt::format("{}: team '{}' takes {} items, not those of a {} team", field, name,
                                   to_string(t.type), on_device ? "device" : "host"));
          used.insert(name);
        }
      }
    }
    for (const auto& t : b.configuration.teams)
      if (!used.count(t.name))
        fail(step,
             fmt::format("field configuration.teams: team '{}' (routine '{}') runs no stage of the bundle's pipelines",
                         t.name, t.action));
  }

  // Dependences: on an earlier bundle, or through a plain edge on an earlier action of the same pipeline.
  void check_dependences() const {
    for (const Dependence& d : graph.dependences()) {
      const Slot& from = slots[static_cast<std::size_t>(d.from)];
      const Slot& to = slots[static_cast<std::size_t>(d.to)];
      const auto& names = graph.actions();
      const std::string what =
          fmt::format("action '{}' depends on '{}' ({} of '{}')", names[static_cast<std::size_t>(d.to)].action,
                      names[static_cast<std::size_t>(d.from)].action, to_string(d.kind), d.variable);
      if (from.step < to.step) continue;
      if (from.step > to.step) fail(to.step, what + fmt::format(", which runs later (step {})", from.step));
      if (d.barrier)
        fail(to.step, what + " through a stencil, which needs it done on every block first: not in one bundle");
      if (from.pipeline != to.pipeline)
        fail(to.step, what + fmt::format(", in pipeline {} beside it (pipelines run concurrently)", from.pipeline));
      if (std::make_pair(from.stage, from.position) > std::make_pair(to.stage, to.position))
        fail(to.step, what + ", which runs after it in the pipeline");
    }
  }

  // The last step placing an action before `position` and the first placing one from it on.
  std::pair<int, int> window(int position) const {
    int last = -1, first = static_cast<int>(plan.steps.size());
    for (std::size_t a = 0; a < slots.size(); ++a) {
      if (static_cast<int>(a) < position)
        last = std::max(last, slots[a].step);
      else
        first = std::min(first, slots[a].step);
    }
    return {last, first};
  }

  void check_barriers(const std::vector<int>& reductions) const {
    std::size_t next = 0;
    for (const GraphBarrier& b : graph.barriers()) {
      if (b.removed) continue;
      const auto [last, first] = window(b.after_action);
      const std::string what = fmt::format("the operation's {} barrier{} after {} actions", to_string(b.barrier.kind),
                                           b.barrier.name.empty() ? "" : " '" + b.barrier.name + "'", b.after_action);
      if (last >= first) fail(first, what + " separates actions this bundle runs with actions before it");
      if (b.barrier.kind == BarrierKind::reduction) {
        if (next >= reductions.size()) throw Error::format("{}: field steps: {} is missing", who, what);
        const int at = reductions[next++];
        const PlanStep& s = plan.steps[static_cast<std::size_t>(at)];
        if (s.name != b.barrier.name || s.variables != b.barrier.variables)
          fail(at, fmt::format("this is not {} (over {})", what, fmt::join(b.barrier.variables, ", ")));
        if (!(last < at && at < first))
          fail(at, fmt::format("{} runs here, not between steps {} and {}", what, last, first));
        continue;
      }
      for (const auto& v : b.barrier.variables) {
        bool filled = false;
        for (int s = last + 1; s < first && !filled; ++s) {
          const PlanStep& step = plan.steps[static_cast<std::size_t>(s)];
          filled = step.kind == StepKind::guard_fill && std::count(step.variables.begin(), step.variables.end(), v) > 0;
        }
        if (!filled)
          throw Error::format("{}: field steps: {} (fill of '{}') is missing between steps {} and {}", who, what, v,
                              last, first);
      }
    }
    if (next < reductions.size())
      fail(reductions[next], "a reduction the operation does not have (or has fewer times)");
  }

  // Guard cells read with a stencil were filled since the variable was last written.
  void check_fills() const {
    std::set<std::string> dirty(graph.operation().variables.begin(), graph.operation().variables.end());
    for (std::size_t i = 0; i < plan.steps.size(); ++i) {
      const PlanStep& s = plan.steps[i];
      if (s.kind == StepKind::guard_fill)
        for (const auto& v : s.variables) dirty.erase(v);
      if (s.kind != StepKind::bundle) continue;
      std::vector<std::string> written;
      for (const auto& p : s.bundle.pipelines)
        for (const auto& stage : p.stages)
          for (const auto& name : stage.actions) {
            const ActionDeclaration& a = graph.actions()[static_cast<std::size_t>(graph.find(name))];
            for (const auto& r : a.reads)
              if (r.stencil > 0 && dirty.count(r.variable))
                fail(static_cast<int>(i),
                     fmt::format("action '{}' reads '{}' with a stencil of {}, but its guard cells were not "
                                 "filled since it was last written: a guard_fill step is missing",
                                 name, r.variable, r.stencil));
            written.insert(written.end(), a.writes.begin(), a.writes.end());
          }
      dirty.insert(written.begin(), written.end());
    }
  }
};

}  // namespace

std::string operation_digest(const Operation& operation) {
  Operation canonical = operation;
  for (auto& s : canonical.steps)
    if (s.is_action) s.action = without_costs(s.action);
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : canonical.to_json()) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return fmt::format("{:016x}", hash);
}

void check_plan(const KernelGraph& graph, const Plan& plan) {
  check_plan(graph, plan, operation_digest(graph.operation()));
}

void check_plan(const KernelGraph& graph, const Plan& plan, const std::string& digest) {
  const Operation& operation = graph.operation();
  const std::string who = fmt::format("plan of '{}'", plan.operation);
  if (plan.operation != operation.name)
    throw Error::format("{}: field operation: not a plan of operation '{}': plan '{}' again", who, operation.name,
                        operation.name);
  if (plan.operation_digest != digest) {
    throw Error::format(
        "{}: field operation_digest: '{}' is not the digest of operation '{}' ('{}'): the operation changed "
        "since it was planned, or the plan was edited: plan it again",
        who, plan.operation_digest, operation.name, digest);
  }
  const auto& actions = graph.actions();
  for (std::size_t a = 0; a < std::max(actions.size(), plan.actions.size()); ++a) {
    if (a >= plan.actions.size())
      throw Error::format("{}: field actions: action '{}' is not declared", who, actions[a].action);
    if (a >= actions.size())
      throw Error::format("{}: field actions[{}]: '{}' is not an action of the operation", who, a,
                          plan.actions[a].action);
    if (without_costs(plan.actions[a]).to_json() != without_costs(actions[a]).to_json())
      throw Error::format("{}: field actions[{}]: the declaration of '{}' differs from the operation's ({})", who, a,
                          plan.actions[a].action, actions[a].to_json());
  }
  PlanWalk walk{graph, plan, who, std::vector<Slot>(actions.size())};
  std::vector<int> reductions;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    const int step = static_cast<int>(i);
    if (s.kind == StepKind::guard_fill) walk.check_variables(step, s.variables, "guard_fill");
    if (s.kind == StepKind::reduction) {
      walk.check_variables(step, s.variables, "reads");
      reductions.push_back(step);
    }
    if (s.kind != StepKind::bundle) continue;
    walk.place_actions(step);
    walk.check_teams(step);
  }
  for (std::size_t a = 0; a < actions.size(); ++a)
    if (walk.slots[a].step < 0)
      throw Error::format("{}: field steps: action '{}' runs in no bundle", who, actions[a].action);
  walk.check_dependences();
  walk.check_barriers(reductions);
  walk.check_fills();
}

}  // namespace korch::plan
