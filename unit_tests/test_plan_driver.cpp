// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Generated drivers (docs/planner.md, "Generated drivers"): the generator's refusals, the action
// registry, and the checks a driver makes before it runs anything. Compiling and running generated
// drivers is the plan_driver tests' job (unit_tests/CMakeLists.txt).
#include "test_error_support.hpp"
#include "test_plan_support.hpp"

#include <korch/plan/driver_generator.hpp>
#include <korch/plan/driver_support.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/scheduler.hpp>

#include <doctest/doctest.h>

using namespace korch;
using namespace korch::test;

namespace {

plan::Plan plan_of(const plan::Operation& op) {
  plan::SchedulerOptions o;
  o.shape = RuntimeShape{6, 2, 6, 1};
  return plan::Scheduler(o).plan(plan::KernelGraph(op));
}

}  // namespace

TEST_CASE("Driver generator: every bundle's configuration, routine and the work between bundles appear in the driver") {
  std::mt19937 rng(11u);
  const auto op = random_operation(rng, 9, 11);
  const auto p = plan_of(op);
  const std::string source = plan::generate_driver(op, p, "advance_driver");
  CHECK(contains(source,
                 "void advance_driver(korch::Runtime& runtime, korch::DataSource& source, const "
                 "korch::plan::ActionRegistry& registry) {"));
  int fills = 0, reductions = 0;
  for (const auto& step : p.steps) {
    if (step.kind == plan::StepKind::guard_fill) ++fills;
    if (step.kind == plan::StepKind::reduction) ++reductions;
    if (step.kind != plan::StepKind::bundle) continue;
    CHECK(contains(source, "R\"korch(" + step.bundle.configuration.to_json() + ")korch\""));
    for (const auto& q : step.bundle.pipelines)
      for (const auto& s : q.stages) CHECK(contains(source, "driver::routine(registry, source, \"" + s.routine + "\""));
  }
  auto count = [&](const std::string& what) {
    int n = 0;
    for (auto at = source.find(what); at != std::string::npos; at = source.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("pending.fill_guards(") == fills);
  CHECK(count("driver::reduce(") == reductions);
  CHECK(count("runtime.execute(") == static_cast<int>(p.bundles().size()));
}

TEST_CASE(
    "Driver generator: a function name that is not an identifier, or a plan of another operation, is an error naming "
    "it") {
  const auto op = plan::Operation::from_json(running_example);
  const auto p = plan_of(op);
  CHECK(contains(error_of([&] { plan::generate_driver(op, p, "run-plan"); }),
                 "function name 'run-plan' is not a C++ identifier"));
  CHECK(contains(error_of([&] { plan::generate_driver(op, p, "2run"); }), "'2run' is not a C++ identifier"));
  const auto other = plan::Operation::from_json(
      R"({"name": "other", "variables": ["u"], "steps": [{"action": {"name": "Z", "writes": ["u"]}}]})");
  CHECK(contains(error_of([&] { plan::generate_driver(other, p); }),
                 "plan of 'running_example': field operation: not a plan of operation 'other'"));
  auto renamed = op;
  renamed.steps[0].action.action = "A2";
  CHECK(contains(error_of([&] { plan::generate_driver(renamed, p); }),
                 "plan of 'running_example': field operation_digest"));
}

TEST_CASE("Action registry: an empty name or body, or a name registered twice, is an error naming the action") {
  plan::ActionRegistry r;
  const plan::ActionBody body = [](DataSource&, int, const Box&) {};
  r.add("A", body);
  CHECK(r.has("A"));
  CHECK(contains(error_of([&] { r.add("A", body); }), "action 'A' is registered twice"));
  CHECK(contains(error_of([&] { r.add("", body); }), "without a name"));
  CHECK(contains(error_of([&] { r.add("B", {}); }), "action 'B': the body is empty"));
  CHECK(contains(error_of([&] { r.body("C"); }), "no body for action 'C' (registered: A)"));
}

TEST_CASE(
    "Driver checks: a missing body, too few variables or guard cells, another level or a missing hook stop it before "
    "it runs") {
  plan::ActionRegistry r;
  r.add("A", [](DataSource&, int, const Box&) {});
  Grid grid(plan_grid_spec(2));  // 2 variables, 2 guard cells, level 0
  CHECK(error_of([&] { plan::driver::check(r, grid, "op", {"A"}, 2, 2, {0}); }).empty());
  CHECK(contains(error_of([&] {
                   plan::driver::check(r, grid, "op", {"A", "B"}, 2, 0, {});
                 }),
                 "driver of operation 'op': action 'B' has no body in the registry"));
  CHECK(contains(error_of([&] { plan::driver::check(r, grid, "op", {"A"}, 3, 0, {}); }),
                 "3 variables but the grid only 2"));
  CHECK(contains(error_of([&] { plan::driver::check(r, grid, "op", {"A"}, 2, 3, {}); }),
                 "reads 3 guard cells, but the grid has 2"));
  CHECK(contains(error_of([&] { plan::driver::check(r, grid, "op", {"A"}, 2, 0, {1}); }),
                 "iterates over level 1, but the grid has no block on it (its levels: 0)"));
  CHECK(contains(error_of([&] { plan::driver::fill_guards(r, grid, "op", {0}); }), "hooks.fill_guards is empty"));
  CHECK(contains(error_of([&] { plan::driver::reduce(r, grid, "op", "dt", {0}); }),
                 "reduces 'dt' but the registry's hooks.reduce is empty"));
}

TEST_CASE(
    "Driver fills: with hooks.filling_order a fill waits for the next bundle's cycle, without it is done at once") {
  plan::ActionRegistry r;
  Grid grid(plan_grid_spec(2));
  int fills = 0, orders = 0;
  r.hooks.fill_guards = [&fills](DataSource&, const std::vector<int>&) { ++fills; };
  plan::driver::PendingFills now;
  now.fill_guards(r, grid, "op", {0});
  CHECK(fills == 1);
  CHECK(now.order(r, grid, "op", "b0") == nullptr);  // nothing waits

  FillingOrder order(grid);
  std::vector<int> asked;
  r.hooks.filling_order = [&](DataSource&, const std::vector<int>& vars) -> BlockIterator* {
    ++orders;
    asked = vars;
    return &order;
  };
  plan::driver::PendingFills later;
  later.fill_guards(r, grid, "op", {1});
  later.fill_guards(r, grid, "op", {0, 1});
  CHECK(fills == 1);
  CHECK(later.order(r, grid, "op", "b1") == &order);
  CHECK(asked == std::vector<int>{1, 0});  // each variable once, in the order asked
  CHECK(later.order(r, grid, "op", "b2") == nullptr);
  later.fill_guards(r, grid, "op", {0});
  later.flush(r, grid, "op");  // before a reduction or at the end: through fill_guards
  CHECK(fills == 2);
  CHECK(orders == 1);

  r.hooks.filling_order = [](DataSource&, const std::vector<int>&) -> BlockIterator* { return nullptr; };
  later.fill_guards(r, grid, "op", {0});
  CHECK(contains(error_of([&] { later.order(r, grid, "op", "b3"); }),
                 "gave no block order for the fill before bundle 'b3'"));
}
