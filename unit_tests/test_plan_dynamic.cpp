// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Dynamic mode (docs/planner.md, "Dynamic mode"): measured costs from the runtime's trace replace
// the hints, plans follow them, and results stay those of program order.
#include "test_error_support.hpp"
#include "test_plan_support.hpp"

#include <korch/plan/adaptive_executor.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <chrono>

using namespace korch;
using namespace korch::test;

namespace {

plan::AdaptiveOptions adaptive_options(int replan_every) {
  plan::AdaptiveOptions o;
  o.scheduler.shape = RuntimeShape{6, 2, 6, 1};
  o.replan_every = replan_every;
  return o;
}

// H is declared short (cheap on the host, dear to launch on a device) but spins 10 us per cell;
// N1 and N2 are plain. The three are independent: three pipelines of one action each.
const char* misjudged = R"({"name": "misjudged", "variables": ["u", "v", "w"], "steps": [
    {"action": {"name": "H", "reads": ["u"], "writes": ["u"], "hints": {"short": true}}},
    {"action": {"name": "N1", "reads": ["v"], "writes": ["v"]}},
    {"action": {"name": "N2", "reads": ["w"], "writes": ["w"]}}]})";

plan::ActionBodies misjudged_bodies(const plan::Operation& op) {
  plan::ActionBodies bodies = bodies_of(op);
  const plan::ActionBody h = bodies.at("H");
  bodies["H"] = [h](DataSource& source, int block, const Box& box) {
    Grid& grid = as_grid(source);
    const auto cells = (box.hi[0] - box.lo[0]) * (box.hi[1] - box.lo[1]) * (box.hi[2] - box.lo[2]);
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(10 * cells);
    while (std::chrono::steady_clock::now() < until) {
    }
    h(grid, block, box);
  };
  return bodies;
}

plan::Placement placement_of(const plan::Plan& p, const std::string& action) {
  for (const auto* b : p.bundles())
    for (const auto& q : b->pipelines)
      for (const auto& s : q.stages)
        for (const auto& a : s.actions)
          if (a == action) return q.placement.placement;
  FAIL("no action " << action);
  return plan::Placement::host;
}

// Each bundle's pipelines: their stages and where they run.
std::string mapping(const plan::Plan& p) {
  std::string out;
  for (const auto* b : p.bundles()) {
    for (const auto& q : b->pipelines) {
      for (const auto& s : q.stages) out += s.routine + " ";
      out += std::string(plan::to_string(q.placement.placement)) + "; ";
    }
    out += "| ";
  }
  return out;
}

}  // namespace

TEST_CASE(
    "Dynamic mode: an action hinted short but measured heavy leaves the host teams at the re-plan; every step equals "
    "program order") {
  const auto op = plan::Operation::from_json(misjudged);
  Runtime runtime(RuntimeOptions{6, 2, 6, 1, {}, 0, 0});
  std::vector<std::string> adaptive_log, reference_log;
  plan::AdaptiveExecutor adaptive(op, misjudged_bodies(op), logging_hooks(adaptive_log), adaptive_options(2));
  const plan::Executor reference(op, bodies_of(op), logging_hooks(reference_log));
  const plan::KernelGraph graph(op);
  CHECK(placement_of(adaptive.plan(), "H") == plan::Placement::host);  // from the hint
  Grid run(plan_grid_spec(3)), expected(plan_grid_spec(3));
  paint(run);
  paint(expected);
  for (int step = 1; step <= 4; ++step) {
    adaptive.step(runtime, run);
    reference.run_sequentially(graph, expected);
    REQUIRE(differing_cells(run, expected) == 0);
    if (step == 2) {
      REQUIRE(adaptive.replans() == 1);
      // On devices, or split when a loaded machine makes the others look dearer than they are.
      CHECK(placement_of(adaptive.plan(), "H") != plan::Placement::host);
      MESSAGE("H after the re-plan: " << std::string(plan::to_string(placement_of(adaptive.plan(), "H"))));
    }
  }
  CHECK(adaptive.replans() == 2);
  const auto& m = adaptive.measured();
  REQUIRE(m.count("H") == 1);
  REQUIRE(m.count("N1") == 1);
  // 640 us of spinning per block against about a microsecond (tens under a sanitizer).
  CHECK(m.at("H").host >= 6.0e-4);
  CHECK(m.at("H").host > 5 * m.at("N1").host);
  CHECK(m.at("H").device > 0);   // measured on a device team after the re-plan
  CHECK(m.at("N2").device > 0);  // N1 and N2 are split: measured on both sides
  CHECK(m.at("N2").host > 0);
  MESSAGE("seconds per block: H host " << m.at("H").host << ", device " << m.at("H").device << "; N1 host "
                                       << m.at("N1").host << ", device " << m.at("N1").device << "; re-planning took "
                                       << adaptive.last_planning_seconds() << " s");
}

TEST_CASE("Dynamic mode: 30 random operations re-planned after every step stay bitwise equal to program order") {
  std::mt19937 rng(99u);
  Runtime runtime(RuntimeOptions{6, 2, 6, 1, {}, 0, 0});
  int changed = 0;
  for (int i = 0; i < 30; ++i) {
    const auto op = random_operation(rng, 3 + static_cast<int>(rng() % 8u), i);
    CAPTURE(op.to_json());
    std::vector<std::string> log, reference_log;
    plan::AdaptiveExecutor adaptive(op, bodies_of(op), logging_hooks(log), adaptive_options(1));
    const plan::Executor reference(op, bodies_of(op), logging_hooks(reference_log));
    const plan::KernelGraph graph(op);
    const std::string first = mapping(adaptive.plan());
    Grid run(plan_grid_spec(static_cast<int>(op.variables.size()))),
        expected(plan_grid_spec(static_cast<int>(op.variables.size())));
    paint(run);
    paint(expected);
    for (int step = 0; step < 3; ++step) {
      adaptive.step(runtime, run);
      reference.run_sequentially(graph, expected);
      REQUIRE(differing_cells(run, expected) == 0);
    }
    REQUIRE(log == reference_log);
    changed += mapping(adaptive.plan()) != first ? 1 : 0;
  }
  MESSAGE(changed << " of 30 operations mapped differently after measuring");
  CHECK(changed > 0);
}

TEST_CASE(
    "Dynamic mode: fused stages share their measured time by cost; actions never measured on a side are forecast from "
    "the measured ones") {
  const auto op = plan::Operation::from_json(R"({"name": "f", "variables": ["u", "v"], "steps": [
      {"action": {"name": "S", "writes": ["u"], "hints": {"short": true, "host_only": true}}},
      {"action": {"name": "T", "reads": ["u"], "writes": ["v"], "hints": {"host_only": true}}}]})");
  plan::PlannedBundle bundle;
  plan::PlannedPipeline pipeline;
  pipeline.stages.push_back(plan::Stage{{"S", "T"}, "S+T", plan::Placement::host});
  pipeline.host_teams = {"team0"};
  pipeline.host_type = DataType::block;
  bundle.pipelines.push_back(pipeline);
  const Grid grid(plan_grid_spec(2));
  std::vector<TraceEvent> events;
  for (int b = 0; b < grid.n_blocks(); ++b)
    events.push_back(TraceEvent{"S+T", "task", "team0", 0, "block", 0, 11000});                // 11 us
  events.push_back(TraceEvent{"distribute", "distributor", "distributor", 0, "", 0, 999999});  // not a task: ignored
  std::vector<ActionDeclaration> actions;
  for (const auto* a : op.actions()) actions.push_back(*a);
  const plan::CostModel model;
  plan::CostMeasurement measurement;
  measurement.add(bundle, events, grid, actions, model);
  const auto costs = measurement.costs();
  // S costs 0.1 and T 1.0 on the host: S gets 1/11 of the 11 us per block.
  CHECK(costs.at("S").host == doctest::Approx(1e-6));
  CHECK(costs.at("T").host == doctest::Approx(1e-5));
  CHECK(costs.at("S").device == 0);
  const auto forecast = plan::with_measured_costs(op, costs, model);
  // 11 us per 1.1 cost units: a device cost of 0.5 (S short) is forecast as 5 us.
  CHECK(forecast.steps[0].action.hints.measured_host == doctest::Approx(1e-6));
  CHECK(forecast.steps[0].action.hints.measured_device == doctest::Approx(5e-6));
  CHECK(forecast.steps[1].action.hints.measured_device == doctest::Approx(7e-6));
  CHECK(plan::with_measured_costs(op, {}, model).steps[0].action.hints.measured_host == 0);
}

TEST_CASE("Dynamic mode: replan_every below 1 or a smoothing outside (0, 1] is an error naming the option") {
  const auto op = plan::Operation::from_json(misjudged);
  CHECK(contains(error_of([&] { plan::AdaptiveExecutor(op, bodies_of(op), {}, adaptive_options(0)); }),
                 "option replan_every is 0: give 1 or more steps"));
  auto o = adaptive_options(1);
  o.smoothing = 0;
  CHECK(contains(error_of([&] { plan::AdaptiveExecutor(op, bodies_of(op), {}, o); }), "option smoothing is 0"));
}
