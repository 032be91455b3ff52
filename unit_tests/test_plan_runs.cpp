// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Plans made and run: the design's running example (actions A..F) and random operations, each run
// on the Runtime and compared bitwise with its sequential execution in program order.
#include "test_error_support.hpp"
#include "test_plan_support.hpp"

#include <korch/block_list.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/scheduler.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <random>

using namespace korch;
using namespace korch::test;

namespace {

struct Where {
  std::size_t bundle = 0, pipeline = 0, stage = 0, position = 0;
};

// Where each action landed in the plan.
std::map<std::string, Where> locate(const plan::Plan& p) {
  std::map<std::string, Where> out;
  const auto bundles = p.bundles();
  for (std::size_t b = 0; b < bundles.size(); ++b)
    for (std::size_t q = 0; q < bundles[b]->pipelines.size(); ++q)
      for (std::size_t s = 0; s < bundles[b]->pipelines[q].stages.size(); ++s)
        for (std::size_t i = 0; i < bundles[b]->pipelines[q].stages[s].actions.size(); ++i)
          out[bundles[b]->pipelines[q].stages[s].actions[i]] = Where{b, q, s, i};
  return out;
}

// Every dependence is satisfied: its source in an earlier bundle (a later one after a barrier
// edge), or earlier in the same pipeline.
std::string broken_dependence(const plan::KernelGraph& g, const plan::Plan& p) {
  const auto at = locate(p);
  for (const auto& d : g.dependences()) {
    const auto& from = at.at(g.actions()[static_cast<std::size_t>(d.from)].action);
    const auto& to = at.at(g.actions()[static_cast<std::size_t>(d.to)].action);
    const bool ok =
        from.bundle < to.bundle || (!d.barrier && from.bundle == to.bundle && from.pipeline == to.pipeline &&
                                    (from.stage < to.stage || (from.stage == to.stage && from.position < to.position)));
    if (!ok)
      return g.actions()[static_cast<std::size_t>(d.from)].action + " -> " +
             g.actions()[static_cast<std::size_t>(d.to)].action;
  }
  return "";
}

// Host-only actions never on a device team, device-only ones never on a host team: the teams of
// each action's stage, by their names and by their data types in the configuration.
bool hints_kept(const plan::Plan& p) {
  for (const auto* b : p.bundles())
    for (const auto& q : b->pipelines)
      for (std::size_t s = 0; s < q.stages.size(); ++s) {
        const bool host = s < q.host_teams.size() && !q.host_teams[s].empty();
        const bool device = s < q.device_teams.size() && !q.device_teams[s].empty();
        if (host && b->configuration.find_team(q.host_teams[s])->type == DataType::action_metadata) return false;
        if (device && b->configuration.find_team(q.device_teams[s])->type != DataType::action_metadata) return false;
        for (const auto& name : q.stages[s].actions) {
          const auto& a = p.action(name);
          if (a.hints.host_only && device) return false;
          if (a.hints.device_only && host) return false;
        }
      }
  return true;
}
// Makes an operation's actions a chain (each reads the first variable the one before writes) whose
// first action is host only and last device only, so that its pipelines change sides midway.
void chain_sides(plan::Operation& op) {
  std::vector<ActionDeclaration*> chain;
  for (auto& s : op.steps)
    if (s.is_action) chain.push_back(&s.action);
  for (std::size_t k = 1; k < chain.size(); ++k) {
    if (chain[k - 1]->writes.empty()) continue;
    const std::string& w = chain[k - 1]->writes.front();
    if (!chain[k]->reads_variable(w)) chain[k]->reads.push_back(VariableRead{w, 0});
  }
  chain.front()->hints.device_only = false;
  chain.front()->hints.host_only = true;
  chain.back()->hints.host_only = false;
  chain.back()->hints.device_only = true;
}

}  // namespace

TEST_CASE("Running example: A..F planned into pipelines that keep every dependence and hint") {
  const auto op = plan::Operation::from_json(running_example);
  const plan::KernelGraph g(op);
  // The only dependences are the design's: W(A)∩R(B) and W(D)∩R(E).
  CHECK(g.dependences().size() == 2);
  const plan::Plan p = plan::Scheduler(scheduler_options()).plan(g);
  CHECK(p.bundles().size() == 1);
  CHECK(broken_dependence(g, p).empty());
  CHECK(hints_kept(p));
  const auto at = locate(p);
  CHECK(at.at("A").pipeline == at.at("B").pipeline);
  CHECK(at.at("D").pipeline == at.at("E").pipeline);
  CHECK(at.at("A").pipeline != at.at("D").pipeline);
  const auto& bundle = *p.bundles()[0];
  CHECK(at.at("A").stage == at.at("B").stage);                              // A is short: fused with B
  CHECK_FALSE(bundle.pipelines[at.at("B").pipeline].device_teams.empty());  // B is heavy: on a device
  CHECK(bundle.pipelines[at.at("F").pipeline].device_teams.empty());
  CHECK(bundle.configuration.teams.size() <= 6);
  CHECK(contains(p.to_json(), "\"configuration\""));
  const std::string dot = plan::configuration_dot(bundle.configuration);
  CHECK(contains(dot, "digraph"));
  CHECK(contains(dot, "A+B"));
}

TEST_CASE("Configuration drawings: a router is a diamond whose two edges carry each side's share") {
  auto c = configurations::get("big_example");
  c.helpers[0].fraction = 0.25;
  const std::string dot = plan::configuration_dot(c);
  CHECK(contains(dot, "\"split_b\" [shape=diamond"));
  CHECK(contains(dot, "\"split_b\" -> \"to_b_gpu\" [label=\"0.25 of the blocks\"]"));
  CHECK(contains(dot, "\"split_b\" -> \"b_cpu\" [label=\"0.75 of the blocks\"]"));
  CHECK(contains(dot, "\"a_cpu\" -> \"split_b\""));
}

TEST_CASE("Running example: the plan runs on the runtime applying each action once per cell, in dependence order") {
  const auto op = plan::Operation::from_json(running_example);
  const plan::KernelGraph g(op);
  const plan::Plan p = plan::Scheduler(scheduler_options()).plan(g);
  Grid grid(plan_grid_spec(6));
  const int cells = CellStamps::cells;
  CellStamps stamps(grid, 6);
  Runtime runtime(runtime_options);
  plan::Executor(op, stamps.bodies(6), {}).run(p, runtime, grid);
  CHECK(stamps.repeats() == 0);
  auto at = [&](int a, int b, int cell) { return stamps.at(a, b, cell); };
  CHECK(stamps.missing() == 0);
  int out_of_order = 0;
  for (int b = 0; b < grid.n_blocks(); ++b)
    for (int cell = 0; cell < cells; ++cell) {
      out_of_order += at(0, b, cell) > at(1, b, cell) ? 1 : 0;  // A before B
      out_of_order += at(3, b, cell) > at(4, b, cell) ? 1 : 0;  // D before E
    }
  CHECK(out_of_order == 0);
}

TEST_CASE(
    "Random operations: 200 plans, a quarter of them forced to change sides midway, keep every dependence and hint and "
    "run bitwise equal to program order") {
  std::mt19937 rng(20240601u);
  Runtime runtime(runtime_options);
  const plan::Scheduler scheduler(scheduler_options());
  int bundles = 0, split = 0, fused = 0, action_parallel = 0, routers = 0, host_then_device = 0;
  for (int i = 0; i < 200; ++i) {
    plan::Operation op = random_operation(rng, 2 + static_cast<int>(rng() % 9u), i);
    if (i % 4 == 0) chain_sides(op);
    CAPTURE(op.to_json());
    const plan::KernelGraph g(op);
    // Run from the plan's JSON: what korch-plan writes is what runs.
    const std::string text = scheduler.plan(g).to_json();
    const plan::Plan p = plan::Plan::from_json(text);
    REQUIRE(p.to_json() == text);
    REQUIRE(broken_dependence(g, p).empty());
    REQUIRE(hints_kept(p));
    std::vector<std::string> plan_log, reference_log;
    Grid planned(plan_grid_spec(static_cast<int>(op.variables.size())));
    Grid reference(plan_grid_spec(static_cast<int>(op.variables.size())));
    paint(planned);
    paint(reference);
    plan::Executor(op, bodies_of(op), logging_hooks(plan_log)).run(p, runtime, planned);
    plan::Executor(op, bodies_of(op), logging_hooks(reference_log)).run_sequentially(g, reference);
    REQUIRE(differing_cells(planned, reference) == 0);
    REQUIRE(plan_log == reference_log);
    for (const auto* b : p.bundles()) {
      ++bundles;
      action_parallel += b->pipelines.size() > 1 ? 1 : 0;
      for (const auto& h : b->configuration.helpers) routers += h.kind == HelperKind::router ? 1 : 0;
      for (const auto& q : b->pipelines) {
        host_then_device +=
            q.stages.front().placement == plan::Placement::host && q.stages.back().placement == plan::Placement::device
                ? 1
                : 0;
        split += q.placement.placement == plan::Placement::split ? 1 : 0;
        for (const auto& s : q.stages) fused += s.actions.size() > 1 ? 1 : 0;
      }
    }
  }
  MESSAGE("200 random operations: " << bundles << " bundles (" << action_parallel << " with several pipelines), "
                                    << split << " split pipelines, " << fused << " fused stages, " << routers
                                    << " routers, " << host_then_device << " pipelines from host to device teams");
  CHECK(action_parallel > 0);
  CHECK(routers > 0);
  CHECK(host_then_device > 0);
  CHECK(split > 0);
  CHECK(fused > 0);
}

TEST_CASE(
    "Random operations on a code's own blocks: plans run on a BlockList bitwise equal to program order on a Grid") {
  std::mt19937 rng(20261128u);
  Runtime runtime(runtime_options);
  const plan::Scheduler scheduler(scheduler_options());
  for (int i = 0; i < 40; ++i) {
    plan::Operation op = random_operation(rng, 2 + static_cast<int>(rng() % 7u), i);
    if (i % 4 == 0) chain_sides(op);
    CAPTURE(op.to_json());
    const plan::KernelGraph g(op);
    const plan::Plan p = scheduler.plan(g);
    const int n_vars = static_cast<int>(op.variables.size());
    // The code's memory is laid out as a Grid's, so that its guard fill and comparison apply; the
    // plan sees only the list.
    Grid memory(plan_grid_spec(n_vars)), reference(plan_grid_spec(n_vars));
    paint(memory);
    paint(reference);
    BlockList list("code blocks", n_vars);
    for (int b = 0; b < memory.n_blocks(); ++b) {
      const BlockMeta& m = memory.block(b);
      BlockShape shape;
      for (int d = 0; d < 3; ++d) {
        shape.cells[d] = m.interior.extent(d);
        shape.guard[d] = m.interior.lo[d] - m.stored.lo[d];
      }
      shape.tile_cells = plan_grid_spec(n_vars).tile_cells;
      shape.level = m.level;
      list.add(shape, BlockArray::of(memory.block_data(b), IndexOrder::var_i_j_k));
    }
    std::vector<std::string> plan_log, reference_log;
    plan::ExecutionHooks hooks = logging_hooks(plan_log);
    const plan::ExecutionHooks on_memory = hooks;
    hooks.fill_guards = [&](DataSource&, const std::vector<int>& vars) { on_memory.fill_guards(memory, vars); };
    hooks.reduce = [&](DataSource&, const std::string& name, const std::vector<int>& vars) {
      on_memory.reduce(memory, name, vars);
    };
    plan::Executor(op, bodies_of(op), hooks).run(p, runtime, list);
    plan::Executor(op, bodies_of(op), logging_hooks(reference_log)).run_sequentially(g, reference);
    REQUIRE(differing_cells(memory, reference) == 0);
    REQUIRE(plan_log == reference_log);
  }
}

TEST_CASE(
    "Random operations: fills inside the next bundle's cycle (ExecutionHooks::filling_order) give program order's "
    "bits") {
  std::mt19937 rng(515u);
  Runtime runtime(runtime_options);
  const plan::Scheduler scheduler(scheduler_options());
  int inside = 0, before = 0;
  for (int i = 0; i < 60; ++i) {
    const plan::Operation op = random_operation(rng, 2 + static_cast<int>(rng() % 9u), i);
    CAPTURE(op.to_json());
    const plan::KernelGraph g(op);
    const plan::Plan p = scheduler.plan(g);
    std::vector<std::string> plan_log, reference_log;
    Grid planned(plan_grid_spec(static_cast<int>(op.variables.size())));
    Grid reference(plan_grid_spec(static_cast<int>(op.variables.size())));
    paint(planned);
    paint(reference);
    FillingOrder order(planned);
    plan::ExecutionHooks hooks = logging_hooks(plan_log);
    hooks.fill_guards = [&before](DataSource& source, const std::vector<int>& vars) {
      ++before;
      fill_periodic(as_grid(source), vars);
    };
    hooks.filling_order = [&order](DataSource&, const std::vector<int>& vars) -> BlockIterator* {
      order.set_variables(vars);
      return &order;
    };
    plan::Executor(op, bodies_of(op), hooks).run(p, runtime, planned);
    plan::Executor(op, bodies_of(op), logging_hooks(reference_log)).run_sequentially(g, reference);
    REQUIRE(differing_cells(planned, reference) == 0);
    REQUIRE(plan_log == reference_log);
    inside += order.cycles;
  }
  MESSAGE("60 random operations: " << inside << " fills inside a cycle, " << before
                                   << " before a reduction or at the end");
  CHECK(inside > 0);
}

TEST_CASE("Executor: one Executor runs plans whose stages differ, and on new grids, with the bits of program order") {
  std::mt19937 rng(2024u);
  Runtime runtime(runtime_options);
  plan::SchedulerOptions unfused = scheduler_options();
  unfused.fuse_short = false;
  int changed = 0;
  for (int i = 0; i < 20; ++i) {
    const plan::Operation op = random_operation(rng, 4 + static_cast<int>(rng() % 6u), i);
    CAPTURE(op.to_json());
    const plan::KernelGraph g(op);
    const plan::Plan fused_plan = plan::Scheduler(scheduler_options()).plan(g);
    const plan::Plan unfused_plan = plan::Scheduler(unfused).plan(g);
    changed += fused_plan.to_json() != unfused_plan.to_json() ? 1 : 0;
    const int n_vars = static_cast<int>(op.variables.size());
    Grid reference(plan_grid_spec(n_vars));
    paint(reference);
    std::vector<std::string> reference_log;
    plan::Executor(op, bodies_of(op), logging_hooks(reference_log)).run_sequentially(g, reference);
    // One Executor for every run: fused, unfused, fused again, then on another grid.
    std::vector<std::string> log;
    const plan::Executor executor(op, bodies_of(op), logging_hooks(log));
    for (const plan::Plan* p : {&fused_plan, &unfused_plan, &fused_plan, &fused_plan}) {
      Grid planned(plan_grid_spec(n_vars));  // a new grid each run
      paint(planned);
      log.clear();
      executor.run(*p, runtime, planned);
      REQUIRE(differing_cells(planned, reference) == 0);
      REQUIRE(log == reference_log);
    }
  }
  CHECK(changed > 0);  // some operations' stages differ between the two plans
}

TEST_CASE("Scheduler: planning 100 actions takes less than a second") {
  std::mt19937 rng(7u);
  const plan::Operation op = random_operation(rng, 100, 0);
  const auto t0 = std::chrono::steady_clock::now();
  const plan::KernelGraph g(op);
  const plan::Plan p = plan::Scheduler(scheduler_options()).plan(g);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("planning 100 actions: " << seconds << " s, " << p.bundles().size() << " bundles");
  CHECK(broken_dependence(g, p).empty());
  CHECK(seconds < 1.0);
}

TEST_CASE(
    "Executor: a missing body, a stencil wider than the grid's guard cells or a missing hook is an error naming it") {
  const auto op = plan::Operation::from_json(R"({"name": "e", "variables": ["u", "v"], "steps": [
      {"action": {"name": "A", "writes": ["u"]}},
      {"action": {"name": "B", "reads": [{"variable": "u", "stencil": 3}], "writes": ["v"]}}]})");
  CHECK(contains(error_of([&] { plan::Executor(op, {}, {}); }), "action 'A': no body given"));
  const plan::KernelGraph g(op);
  const plan::Plan p = plan::Scheduler(scheduler_options()).plan(g);
  Grid grid(plan_grid_spec(2));  // 2 guard cells
  Runtime runtime(runtime_options);
  CHECK(contains(error_of([&] { plan::Executor(op, bodies_of(op), {}).run(p, runtime, grid); }),
                 "action 'B': field reads[0].stencil: 3 guard cells, but the grid has 2"));
  const auto narrow = plan::Operation::from_json(R"({"name": "n", "variables": ["u", "v"], "steps": [
      {"action": {"name": "A", "writes": ["u"]}},
      {"action": {"name": "B", "reads": [{"variable": "u", "stencil": 1}], "writes": ["v"]}}]})");
  const plan::Plan pn = plan::Scheduler(scheduler_options()).plan(plan::KernelGraph(narrow));
  CHECK(contains(error_of([&] { plan::Executor(narrow, bodies_of(narrow), {}).run(pn, runtime, grid); }),
                 "ExecutionHooks::fill_guards is empty"));
}

TEST_CASE(
    "Plan files: a bad plan names the step and field (stage placements too), inside bundles too; a plan of another "
    "operation is refused before it runs") {
  const auto op = plan::Operation::from_json(running_example);
  const std::string text = plan::Scheduler(scheduler_options()).plan(plan::KernelGraph(op)).to_json();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  CHECK(contains(error_of([&] { plan::Plan::from_json(with("\"placement\": \"device\"", "\"placement\": \"gpu\"")); }),
                 "plan 'running_example': step 0: field bundle.pipelines[0].placement: unknown placement 'gpu'"));
  CHECK(contains(error_of([&] { plan::Plan::from_json(with("\"stages\"", "\"stage\"")); }),
                 "step 0: field stages: missing"));
  CHECK(contains(
      error_of([&] { plan::Plan::from_json(with("\"stage_placements\": [", "\"stage_placements\": [\"gpu\", ")); }),
      "step 0: field bundle.pipelines[0].stage_placements[0]: unknown placement 'gpu'"));
  CHECK(contains(
      error_of([&] { plan::Plan::from_json(with("\"stage_placements\": [", "\"stage_placements\": [\"host\", ")); }),
      "step 0: field bundle.pipelines[0].stage_placements: 2 placements for 1 stages"));
  CHECK(contains(error_of([&] { plan::Plan::from_json(text.substr(0, text.size() / 2)); }), "plan: not valid JSON"));
  // The configuration's own message follows the plan's step and field.
  const std::string configuration = error_of([&] { plan::Plan::from_json(with("\"action\": \"", "\"act\": \"")); });
  CHECK(contains(configuration, "plan 'running_example': step 0: field bundle.configuration: configuration '"));
  // The first "name": "A" is the declaration's (actions come first): its stage then names an undeclared action.
  const std::string undeclared = error_of([&] { plan::Plan::from_json(with("\"name\": \"A\"", "\"name\": \"A2\"")); });
  CHECK(contains(undeclared, "plan 'running_example': step 0: field bundle.pipelines["));
  CHECK(contains(undeclared, "action 'A' is not declared in field actions"));
  const auto other = plan::Operation::from_json(
      R"({"name": "other", "variables": ["u"], "steps": [{"action": {"name": "Z", "writes": ["u"]}}]})");
  Grid grid(plan_grid_spec(6));
  Runtime runtime(runtime_options);
  CHECK(contains(
      error_of([&] { plan::Executor(other, bodies_of(other), {}).run(plan::Plan::from_json(text), runtime, grid); }),
      "plan of 'running_example': field operation: not a plan of operation 'other'"));
}
