// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The planner's front end: action declarations and the runtime's check of them, operation files
// and their errors, the kernel graph.
#include "test_error_support.hpp"
#include "test_plan_support.hpp"

#include <korch/bundle.hpp>
#include <korch/plan/cost_model.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <atomic>

using namespace korch;
using namespace korch::test;

namespace {

ActionDeclaration declared(const std::string& name, std::vector<std::string> reads, std::vector<std::string> writes) {
  ActionDeclaration d;
  d.action = name;
  for (auto& r : reads) d.reads.push_back(VariableRead{r, 0});
  d.writes = std::move(writes);
  return d;
}

ActionRoutine noop(const std::string& name) {
  return ActionRoutine(name, [](const ActionContext&, DataItem&) {});
}

// Two action-parallel pipelines on tiles: A on team a, B on team b.
Configuration two_pipelines() {
  return Configuration::from_json(R"({"name": "two", "teams": [
      {"name": "a", "type": "tile", "action": "A", "threads": 1},
      {"name": "b", "type": "tile", "action": "B", "threads": 1}],
    "distributor": {"kind": "action_parallel", "groups": [{"pipelines": ["a"]}, {"pipelines": ["b"]}]}})");
}

std::string operation_error(const std::string& text) {
  return error_of([&] { plan::Operation::from_json(text); });
}

}  // namespace

TEST_CASE("ActionDeclaration: JSON round trip keeps reads, stencils, writes, data type, iterator and hints") {
  const auto d = ActionDeclaration::from_json(R"({"name": "B", "reads": ["dens", {"variable": "pres", "stencil": 2}],
    "writes": ["ener"], "data_type": "block", "iterator": {"level": 3},
    "hints": {"heavy": true, "host_only": true, "cost": {"host": 4, "device": 1}, "measured": {"device": 0.5}}})");
  CHECK(d.stencil_of("pres") == 2);
  CHECK(d.stencil_of("dens") == 0);
  CHECK(d.stencil_of("ener") == -1);
  CHECK(d.writes_variable("ener"));
  CHECK(d.data_type == DeclaredDataType::block);
  CHECK(d.iterator == ActionIterator{IteratorKind::level, 3});
  CHECK(d.hints.heavy);
  CHECK(d.hints.host_only);
  CHECK(d.hints.host_cost == 4.0);
  CHECK(d.hints.measured_device == 0.5);
  const auto again = ActionDeclaration::from_json(d.to_json());
  CHECK(again.to_json() == d.to_json());
}

TEST_CASE("ActionDeclaration: contradictions and bad fields are errors naming the action and the field") {
  CHECK(contains(error_of([] {
                   ActionDeclaration::from_json(R"({"name": "F", "hints": {"host_only": true, "device_only": true}})");
                 }),
                 "action 'F': field hints: host_only and device_only contradict"));
  CHECK(contains(
      error_of([] { ActionDeclaration::from_json(R"({"name": "F", "hints": {"short": true, "heavy": true}})"); }),
      "action 'F': field hints: short and heavy"));
  CHECK(contains(
      error_of([] { ActionDeclaration::from_json(R"({"name": "F", "reads": [{"variable": "u", "stencil": -1}]})"); }),
      "action 'F': field reads[0].stencil"));
  CHECK(contains(error_of([] {
                   ActionDeclaration::from_json(
                       R"({"name": "F", "reads": [{"variable": "u", "stencil": 1}], "writes": ["u"]})");
                 }),
                 "action 'F': field writes[0]: variable 'u' is also read with a stencil"));
  CHECK(contains(error_of([] { ActionDeclaration::from_json(R"({"name": "F", "iterator": "everything"})"); }),
                 "action 'F': field iterator: unknown 'everything'"));
  CHECK(contains(error_of([] { ActionDeclaration::from_json(R"({"name": "F", "hints": {"fast": true}})"); }),
                 "action 'F': field hints.fast: unknown field"));
  CHECK(contains(error_of([] { ActionDeclaration::from_json(R"({"name": "F", "writes": "u"})"); }),
                 "action 'F': field writes"));
  CHECK(contains(error_of([] {
                   ActionDeclaration::from_json(
                       R"({"name": "F", "reads": [{"variable": "u", "stencil": 5000000000}]})");
                 }),
                 "action 'F': field reads[0].stencil: integer 5000000000 is out of range"));
  CHECK(contains(error_of([] { noop("A").declared(declared("B", {}, {})); }),
                 "routine 'A' was given the declaration of action 'B'"));
  const ActionRoutine routine = noop("A").declared(declared("A", {"v"}, {"u"}));
  REQUIRE(routine.declaration() != nullptr);
  CHECK(routine.declaration()->writes_variable("u"));
  // The cycle wraps routines to trace them: the wrapper keeps the declaration.
  CHECK(routine.wrapped([](const ActionContext&, DataItem&) {}).declaration() == routine.declaration());
  CHECK(noop("A").declaration() == nullptr);
}

TEST_CASE(
    "Runtime check: action-parallel pipelines that write the same variable, or read what another writes, fail before "
    "anything runs") {
  Runtime runtime(RuntimeOptions{2, 1, 1, 1, {}, 0, 0});
  Grid grid(plan_grid_spec(2));
  std::atomic<int> calls{0};  // two teams count at once
  auto counting = [&calls](const std::string& name, ActionDeclaration d) {
    return ActionRoutine(name, [&calls](const ActionContext&, DataItem&) { ++calls; }).declared(std::move(d));
  };
  Bundle both_write("both_write");
  both_write.add(counting("A", declared("A", {}, {"u"}))).add(counting("B", declared("B", {"v"}, {"u"})));
  const std::string e1 = error_of([&] { runtime.execute(both_write, two_pipelines(), grid); });
  CHECK(contains(e1, "actions 'A' and 'B'"));
  CHECK(contains(e1, "both write variable 'u'"));
  Bundle read_write("read_write");
  read_write.add(counting("A", declared("A", {"v"}, {"u"}))).add(counting("B", declared("B", {}, {"v"})));
  const std::string e2 = error_of([&] { runtime.execute(read_write, two_pipelines(), grid); });
  CHECK(contains(e2, "actions 'A' and 'B'"));
  CHECK(contains(e2, "the second writes what the first reads: variable 'v'"));
  CHECK(calls == 0);
  Bundle disjoint("disjoint");
  disjoint.add(counting("A", declared("A", {"v"}, {"u"}))).add(counting("B", declared("B", {"v"}, {"w"})));
  runtime.execute(disjoint, two_pipelines(), grid);
  CHECK(calls == 2 * grid.n_blocks() * grid.tiles_per_block());
  // One data-parallel group: each item goes to one of the two, so both may write u.
  const auto data_parallel = Configuration::from_json(R"({"name": "dp", "teams": [
      {"name": "a", "type": "tile", "action": "A", "threads": 1},
      {"name": "b", "type": "tile", "action": "B", "threads": 1}],
    "distributor": {"kind": "data_parallel", "groups": [{"pipelines": ["a", "b"], "unit": "block"}]}})");
  CHECK_NOTHROW(runtime.execute(both_write, data_parallel, grid));
  Bundle undeclared("undeclared");  // nothing declared: nothing to check
  undeclared.add(noop("A")).add(noop("B"));
  CHECK_NOTHROW(runtime.execute(undeclared, two_pipelines(), grid));
}

TEST_CASE(
    "Operation files: unknown variables or actions, contradictory hints and malformed JSON name the action and field") {
  const std::string head = R"({"name": "op", "variables": ["u", "v"], "parameters": {"cfl": 1}, "steps": [)";
  CHECK(contains(operation_error(head + R"({"action": {"name": "A", "reads": ["rho"]}}]})"),
                 "operation 'op': step 0 (action 'A'): field reads[0].variable: unknown variable 'rho'"));
  CHECK(contains(operation_error(head + R"({"action": {"name": "A", "writes": ["u", "w"]}}]})"),
                 "step 0 (action 'A'): field writes[1]: unknown variable 'w'"));
  CHECK(contains(operation_error(head + R"({"action": {"name": "A"}}, {"action": {"name": "A"}}]})"),
                 "step 1 (action 'A'): field name: action 'A' appears twice"));
  CHECK(contains(
      operation_error(head + R"({"action": {"name": "B", "hints": {"host_only": true, "device_only": true}}}]})"),
      "step 0: action 'B': field hints: host_only and device_only contradict"));
  CHECK(contains(operation_error(head + R"({"action": {"name": "B", "hint": {}}}]})"),
                 "action 'B': field hint: unknown field"));
  CHECK(contains(operation_error(head + R"({"barrier": "sync"}]})"), "step 0: field barrier: unknown 'sync'"));
  CHECK(contains(operation_error(head + R"({"barrier": "guard_fill", "variables": ["u"], "unless": "dim == 1"}]})"),
                 "field unless: unknown parameter 'dim'"));
  CHECK(contains(operation_error(head + R"({"barrier": "guard_fill", "unless": "cfl ~ 1"}]})"),
                 "field unless: condition 'cfl ~ 1'"));
  CHECK(contains(operation_error(head + R"({"barrier": "reduction", "reads": ["p"]}]})"),
                 "field reads[0]: unknown variable 'p'"));
  CHECK(contains(operation_error(head + R"({"act": {}}]})"), "step 0: expected a field action or barrier"));
  CHECK(contains(operation_error(head), "operation: not valid JSON"));
  CHECK(contains(operation_error(R"({"name": "op", "steps": [{"action": {"name": "A", "writes": [], "writes": []}}]})"),
                 "given twice"));
  CHECK(contains(operation_error(R"({"name": "op", "steps": [], "extra": 1})"), "field extra: unknown field"));
}

TEST_CASE(
    "KernelGraph: RAW, WAR and WAW edges from declarations; stencil reads make barriers; a holding condition removes a "
    "barrier") {
  const auto op = plan::Operation::from_json(R"({"name": "g", "variables": ["u", "v", "w"], "parameters": {"ndim": 1},
    "steps": [
      {"action": {"name": "A", "writes": ["u"]}},
      {"action": {"name": "B", "reads": ["u"], "writes": ["v"]}},
      {"action": {"name": "C", "reads": [{"variable": "v", "stencil": 1}], "writes": ["w"]}},
      {"barrier": "reduction", "name": "dt", "reads": ["w"], "unless": "ndim == 1"},
      {"action": {"name": "D", "writes": ["v", "u"]}},
      {"barrier": "guard_fill", "variables": ["u"], "unless": "ndim > 1"},
      {"action": {"name": "E", "reads": ["u"]}}]})");
  const plan::KernelGraph g(op);
  auto has = [&](const char* from, const char* to, plan::DependenceKind kind, const char* v, bool barrier) {
    for (const auto& d : g.dependences())
      if (g.actions()[static_cast<std::size_t>(d.from)].action == from &&
          g.actions()[static_cast<std::size_t>(d.to)].action == to && d.kind == kind && d.variable == v)
        return d.barrier == barrier;
    return false;
  };
  CHECK(has("A", "B", plan::DependenceKind::raw, "u", false));
  CHECK(has("B", "C", plan::DependenceKind::raw, "v", true));
  CHECK(has("C", "D", plan::DependenceKind::war, "v", true));
  CHECK(has("B", "D", plan::DependenceKind::waw, "v", false));
  CHECK(has("A", "D", plan::DependenceKind::waw, "u", false));
  CHECK(has("B", "D", plan::DependenceKind::war, "u", false));
  CHECK(has("D", "E", plan::DependenceKind::raw, "u", false));
  CHECK(g.barriers().size() == 2);
  CHECK(g.barriers()[0].removed);
  CHECK_FALSE(g.barriers()[1].removed);
  CHECK(g.epoch(g.find("D")) == 0);
  CHECK(g.epoch(g.find("E")) == 1);
  CHECK(contains(g.to_json(), "\"kind\": \"WAR\""));
  CHECK(contains(g.to_dot(), "RAW v (fill)"));
  CHECK(contains(g.to_dot(), "reduction dt (removed)"));
}

TEST_CASE(
    "Kernel graph drawing: one edge per pair of actions; plain edges implied by a path are left out, barrier edges "
    "stay") {
  // A -> B -> C (plain), A -> C (plain, implied by the path), B -> D (stencil: a barrier) and
  // A -> D (plain, implied by A -> B -> D).
  const auto op = plan::Operation::from_json(R"({"name": "chain", "variables": ["u", "v", "w", "x"], "steps": [
      {"action": {"name": "A", "writes": ["u"]}},
      {"action": {"name": "B", "reads": ["u"], "writes": ["v"]}},
      {"action": {"name": "C", "reads": ["u", "v"], "writes": ["w"]}},
      {"action": {"name": "D", "reads": ["u", {"variable": "v", "stencil": 1}], "writes": ["x"]}}]})");
  const plan::KernelGraph g(op);
  const std::string dot = g.to_dot();
  CHECK(contains(dot, "a0 -> a1 [label=\"RAW u\"]"));
  CHECK(contains(dot, "a1 -> a2 [label=\"RAW v\"]"));
  CHECK_FALSE(contains(dot, "a0 -> a2"));
  CHECK_FALSE(contains(dot, "a0 -> a3"));
  CHECK(contains(dot, "a1 -> a3 [label=\"RAW v (fill)\", style=bold, color=red]"));
  CHECK(contains(dot, "5 dependences; 2 plain edges implied by others not drawn"));
}

TEST_CASE("Condition: p, !p and comparisons hold as written; an unknown parameter is an error naming it") {
  const std::map<std::string, double> params{{"ndim", 2}, {"flag", 0}};
  CHECK(plan::Condition::parse("ndim", "unless").holds(params));
  CHECK(plan::Condition::parse("!flag", "unless").holds(params));
  CHECK_FALSE(plan::Condition::parse("flag", "unless").holds(params));
  CHECK(plan::Condition::parse("ndim == 2", "unless").holds(params));
  CHECK(plan::Condition::parse("ndim != 3", "unless").holds(params));
  CHECK(plan::Condition::parse("ndim>=2", "unless").holds(params));
  CHECK_FALSE(plan::Condition::parse("ndim < 2", "unless").holds(params));
  CHECK(plan::Condition::parse("ndim <= 2.5", "unless").holds(params));
  CHECK_FALSE(plan::Condition::parse("ndim > 2", "unless").holds(params));
  CHECK_FALSE(plan::Condition().holds(params));
  CHECK(contains(error_of([&] { plan::Condition::parse("ndim = 2", "steps[1].unless"); }), "field steps[1].unless"));
  CHECK(contains(error_of([&] { plan::Condition::parse("nx > 1", "u").holds(params); }), "parameter 'nx'"));
}

TEST_CASE(
    "CostModel: measured costs win over relative ones, relative over words; hints force the side; close costs split") {
  const plan::CostModel model;
  ActionDeclaration a = declared("A", {}, {});
  a.hints.heavy = true;
  CHECK(model.host_cost(a) == model.host_heavy);
  a.hints.host_cost = 3;
  a.hints.device_cost = 2;
  CHECK(model.host_cost(a) == 3);
  a.hints.measured_host = 0.25;
  CHECK(model.host_cost(a) == 0.25);
  CHECK(model.device_cost(a) == 2);
  CHECK(model.place({&a})->placement == plan::Placement::host);  // 0.25 vs 2
  ActionDeclaration b = declared("B", {}, {});
  const auto split = model.place({&b});
  REQUIRE(split);
  CHECK(split->placement == plan::Placement::split);  // plain: 1 vs 0.7
  CHECK(split->device_weight > split->host_weight);
  b.hints.host_only = true;
  CHECK(model.place({&b})->placement == plan::Placement::host);
  ActionDeclaration c = declared("C", {}, {});
  c.hints.device_only = true;
  CHECK(model.place({&c})->placement == plan::Placement::device);
  CHECK(model.place({&b, &c})->actions == std::vector<plan::Placement>{plan::Placement::host, plan::Placement::device});
  CHECK_FALSE(model.place({&c, &b}));  // device only before host only: no order of sides fits
  plan::CostModel host_only_machine;
  host_only_machine.devices = false;
  CHECK(host_only_machine.place({&a})->placement == plan::Placement::host);
  CHECK_FALSE(host_only_machine.place({&c}));
}
