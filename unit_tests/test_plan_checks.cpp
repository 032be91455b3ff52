// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The plan against its operation (docs/planner.md, "Checking a plan"): hostile edits of a plan are
// refused before anything runs, naming the action, step and field; every number a plan holds reads
// back; corrupted plan files are refused or run to program order's result; the scheduler plans a
// chain of 1,000 dependent actions quickly; readers refuse what is not a bounded regular file.
#include "test_error_support.hpp"
#include "test_plan_support.hpp"

#include <korch/input_files.hpp>
#include <korch/plan/driver_generator.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/plan_check.hpp>
#include <korch/plan/scheduler.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

using namespace korch;
using namespace korch::test;

namespace {

// Four bundles: A; a fill of u, then B (host only, reading A's u with a stencil); the reduction dt;
// C; the operation's fill of w; D.
const char* const checked_operation = R"({"name": "checked", "variables": ["u", "v", "w"], "steps": [
  {"action": {"name": "A", "writes": ["u"]}},
  {"action": {"name": "B", "reads": [{"variable": "u", "stencil": 1}], "writes": ["v"], "hints": {"host_only": true}}},
  {"barrier": "reduction", "name": "dt", "reads": ["v"]},
  {"action": {"name": "C", "reads": ["v"], "writes": ["w"]}},
  {"barrier": "guard_fill", "variables": ["w"]},
  {"action": {"name": "D", "reads": [{"variable": "w", "stencil": 1}], "writes": ["u"]}}]})";

// The index of the `nth` step of `kind` (0: the first).
std::size_t step_of(const plan::Plan& p, plan::StepKind kind, int nth = 0) {
  for (std::size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].kind == kind && nth-- == 0) return i;
  FAIL("no such step");
  return 0;
}

// Runs `edited` on a fresh grid; returns the error ("" when it ran) and checks that nothing ran before it.
std::string refusal(const plan::Operation& op, const plan::Plan& edited) {
  std::vector<std::string> log;
  Grid grid(plan_grid_spec(static_cast<int>(op.variables.size()))), untouched(grid.spec());
  paint(grid);
  paint(untouched);
  Runtime runtime(runtime_options);
  const std::string error =
      error_of([&] { plan::Executor(op, bodies_of(op), logging_hooks(log)).run(edited, runtime, grid); });
  if (!error.empty()) {
    CHECK(differing_cells(grid, untouched) == 0);
    CHECK(log.empty());
  }
  return error;
}

}  // namespace

TEST_CASE(
    "Plan checks: a dropped, duplicated or swapped bundle, emptied steps, removed fills, another operation, a "
    "host-only action on a device are refused naming the action, step and field") {
  const auto op = plan::Operation::from_json(checked_operation);
  const plan::KernelGraph graph(op);
  const plan::Plan plan = plan::Scheduler(scheduler_options()).plan(graph);
  REQUIRE(plan.bundles().size() == 4);
  CHECK_NOTHROW(plan::check_plan(graph, plan));
  CHECK(refusal(op, plan).empty());
  using plan::StepKind;
  auto edit = [&](const std::function<void(plan::Plan&)>& change) {
    plan::Plan p = plan;
    change(p);
    return refusal(op, p);
  };
  const std::size_t a = step_of(plan, StepKind::bundle, 0), b = step_of(plan, StepKind::bundle, 1),
                    c = step_of(plan, StepKind::bundle, 2);
  CHECK(contains(edit([&](plan::Plan& p) { p.steps.erase(p.steps.begin() + static_cast<long>(c)); }),
                 "plan of 'checked': field steps: action 'C' runs in no bundle"));
  CHECK(contains(edit([&](plan::Plan& p) { p.steps.push_back(p.steps[a]); }),
                 "(bundle 'checked_bundle0'): field pipelines[0].stages[0]: action 'A' runs twice (first in step 0)"));
  CHECK(contains(edit([&](plan::Plan& p) { std::swap(p.steps[a], p.steps[b]); }),
                 "action 'B' depends on 'A' (RAW of 'u'), which runs later"));
  CHECK(contains(edit([&](plan::Plan& p) { p.steps[c].bundle.pipelines[0].stages[0].actions.clear(); }),
                 "(bundle 'checked_bundle2'): field pipelines[0].stages[0]: empty"));
  CHECK(contains(edit([&](plan::Plan& p) { p.steps[c].bundle.pipelines.clear(); }), "field pipelines: empty"));
  CHECK(contains(edit([&](plan::Plan& p) {
                   p.steps.erase(p.steps.begin() + static_cast<long>(step_of(p, StepKind::guard_fill, 0)));
                 }),
                 "action 'B' reads 'u' with a stencil of 1, but its guard cells were not filled"));
  CHECK(contains(edit([&](plan::Plan& p) {
                   p.steps.erase(p.steps.begin() + static_cast<long>(step_of(p, StepKind::guard_fill, 1)));
                 }),
                 "the operation's guard_fill barrier after 3 actions (fill of 'w') is missing"));
  CHECK(contains(
      edit([&](plan::Plan& p) { p.steps.erase(p.steps.begin() + static_cast<long>(step_of(p, StepKind::reduction))); }),
      "reduction barrier 'dt' after 2 actions is missing"));
  CHECK(contains(edit([&](plan::Plan& p) { p.steps[step_of(p, StepKind::guard_fill)].variables = {"rho"}; }),
                 "(guard_fill): field guard_fill[0]: unknown variable 'rho'"));
  CHECK(contains(edit([&](plan::Plan& p) {
                   p.steps[step_of(p, StepKind::reduction)].variables = {"v", "rho"};
                 }),
                 "field reads[1]: unknown variable 'rho'"));
  CHECK(contains(
      edit([&](plan::Plan& p) { p.steps[b].bundle.pipelines[0].stages[0].placement = plan::Placement::device; }),
      "action 'B' is host_only but the stage runs on a device"));
  // The plan's sides agree, but the configuration gives B's routine to a team of device items.
  CHECK(
      contains(edit([&](plan::Plan& p) { p.steps[b].bundle.configuration.teams[0].type = DataType::action_metadata; }),
               "team 'p0_s0_host' takes action_metadata items, not those of a host team"));
  CHECK(contains(edit([&](plan::Plan& p) { p.steps[b].bundle.configuration.teams[0].action = "A"; }),
                 "team 'p0_s0_host' runs 'A', not the stage's routine 'B'"));
  CHECK(contains(edit([&](plan::Plan& p) { p.actions[1].reads.clear(); }),
                 "field actions[1]: the declaration of 'B' differs"));
  CHECK(contains(edit([&](plan::Plan& p) { p.operation_digest = "0123456789abcdef"; }),
                 "field operation_digest: '0123456789abcdef' is not the digest of operation 'checked'"));
  // Another operation, and this one edited since it was planned.
  const auto other = plan::Operation::from_json(
      R"({"name": "other", "variables": ["u"], "steps": [{"action": {"name": "A", "writes": ["u"]}}]})");
  CHECK(contains(refusal(other, plan), "plan of 'checked': field operation: not a plan of operation 'other'"));
  plan::Operation edited = op;
  edited.steps[3].action.reads.push_back(VariableRead{"u", 0});
  CHECK(contains(refusal(edited, plan), "field operation_digest"));
  // Cost guesses are not in the digest: a re-plan from measurements keeps it.
  plan::Operation guessed = op;
  guessed.steps[0].action.hints.heavy = true;
  guessed.steps[0].action.hints.measured_host = 2e-6;
  CHECK(plan::operation_digest(guessed) == plan.operation_digest);
  CHECK(refusal(guessed, plan).empty());
  // The driver generator checks the plan too.
  plan::Plan dropped = plan;
  dropped.steps.erase(dropped.steps.begin() + static_cast<long>(c));
  CHECK(contains(error_of([&] { plan::generate_driver(op, dropped); }), "action 'C' runs in no bundle"));
}

TEST_CASE(
    "Plan checks: every plan of 200 random operations passes, and each action moved to another bundle is refused or "
    "still keeps its dependences") {
  std::mt19937 rng(77u);
  const plan::Scheduler scheduler(scheduler_options());
  int refused = 0;
  for (int i = 0; i < 200; ++i) {
    const plan::Operation op = random_operation(rng, 3 + static_cast<int>(rng() % 10u), i);
    CAPTURE(op.to_json());
    const plan::KernelGraph graph(op);
    const plan::Plan p = scheduler.plan(graph);
    REQUIRE_NOTHROW(plan::check_plan(graph, p));
    // Swapping two bundles keeps every action once; it is refused exactly when it breaks an order.
    const auto bundles = p.bundles();
    if (bundles.size() < 2) continue;
    plan::Plan swapped = p;
    std::swap(swapped.steps[step_of(p, plan::StepKind::bundle, 0)],
              swapped.steps[step_of(p, plan::StepKind::bundle, 1)]);
    refused += error_of([&] { plan::check_plan(graph, swapped); }).empty() ? 0 : 1;
  }
  MESSAGE("first two bundles swapped: " << refused << " plans refused");
  CHECK(refused > 0);
}

TEST_CASE(
    "Plan files: costs and hints round-trip; plan -> JSON -> plan is equal over random operations with extreme hints") {
  std::mt19937 rng(4242u);
  const double extremes[] = {0.0, plan::min_given_cost, 1e-300, 3.7, 1e300, plan::max_given_cost};
  const plan::Scheduler scheduler(scheduler_options());
  for (int i = 0; i < 300; ++i) {
    plan::Operation op = random_operation(rng, 2 + static_cast<int>(rng() % 12u), i);
    for (auto& s : op.steps) {
      if (!s.is_action) continue;
      auto& h = s.action.hints;
      h.host_cost = extremes[rng() % 6u];
      h.device_cost = extremes[rng() % 6u];
      h.measured_host = rng() % 3u == 0 ? extremes[rng() % 6u] : 0.0;
      h.measured_device = rng() % 3u == 0 ? extremes[rng() % 6u] : 0.0;
      if (rng() % 5u == 0) s.action.iterator = ActionIterator{IteratorKind::level, 2147483647};
    }
    op = plan::Operation::from_json(op.to_json());
    CAPTURE(op.to_json());
    const plan::KernelGraph graph(op);
    const plan::Plan p = scheduler.plan(graph);
    const std::string text = p.to_json();
    CHECK(!contains(text, "null"));
    const plan::Plan back = plan::Plan::from_json(text);
    REQUIRE(back.to_json() == text);
    REQUIRE_NOTHROW(plan::check_plan(graph, back));
    for (const auto* b : back.bundles())
      for (const auto& q : b->pipelines) {
        CHECK(std::isfinite(q.placement.host_cost));
        CHECK(std::isfinite(q.placement.host_weight / (q.placement.host_weight + q.placement.device_weight)));
      }
  }
  // A cost whose sums could overflow is refused, naming the field.
  const std::string huge = error_of([] {
    plan::Operation::from_json(R"({"name": "h", "variables": ["u"], "steps": [
      {"action": {"name": "A", "writes": ["u"], "hints": {"cost": {"host": 1e308, "device": 1}}}}]})");
  });
  CHECK(contains(huge, "operation 'h': step 0 (action 'A'): action 'A': field hints.cost.host: 1e+308 is outside"));
  CHECK(contains(error_of([] {
                   plan::Operation::from_json(R"({"name": "h", "variables": ["u"], "steps": [
      {"action": {"name": "A", "writes": ["u"], "hints": {"measured": {"host": 1e-310, "device": 1}}}}]})");
                 }),
                 "field hints.measured.host"));
}

TEST_CASE(
    "Plan files: 1,000 single-bit flips and truncations are each refused with a message or run to program order's "
    "result") {
  std::mt19937 rng(20261128u);
  const plan::Scheduler scheduler(scheduler_options());
  Runtime runtime(runtime_options);
  int unread = 0, refused = 0, same = 0;
  for (int op_index = 0; op_index < 10; ++op_index) {
    const plan::Operation op = random_operation(rng, 6 + op_index, op_index);
    const plan::KernelGraph graph(op);
    const std::string text = scheduler.plan(graph).to_json();
    const int n_vars = static_cast<int>(op.variables.size());
    std::vector<std::string> reference_log;
    Grid reference(plan_grid_spec(n_vars));
    paint(reference);
    plan::Executor(op, bodies_of(op), logging_hooks(reference_log)).run_sequentially(graph, reference);
    for (int t = 0; t < 100; ++t) {
      std::string bad = text;
      const std::size_t at = rng() % text.size();
      if (t % 5 == 4) {
        bad.resize(at);
      } else {
        bad[at] = static_cast<char>(bad[at] ^ (1 << (rng() % 8u)));
      }
      CAPTURE(bad);
      plan::Plan p;
      try {
        p = plan::Plan::from_json(bad);
      } catch (const Error&) {
        ++unread;
        continue;
      }
      std::vector<std::string> log;
      Grid grid(plan_grid_spec(n_vars));
      paint(grid);
      const std::string error =
          error_of([&] { plan::Executor(op, bodies_of(op), logging_hooks(log)).run(p, runtime, grid); });
      if (!error.empty()) {
        ++refused;
        continue;
      }
      REQUIRE(differing_cells(grid, reference) == 0);
      REQUIRE(log == reference_log);
      ++same;
    }
  }
  MESSAGE("1000 corrupted plans: " << unread << " not read, " << refused << " refused by the check or the runtime, "
                                   << same << " ran to program order's result");
  CHECK(unread + refused + same == 1000);
}

TEST_CASE("Scheduler: a chain of 1,000 dependent actions is planned in well under 5 s") {
  plan::Operation op;
  op.name = "chain";
  for (int v = 0; v <= 1000; ++v) op.variables.push_back("v" + std::to_string(v));
  for (int a = 0; a < 1000; ++a) {
    plan::Step s;
    s.action.action = "a" + std::to_string(a);
    s.action.reads.push_back(VariableRead{op.variables[static_cast<std::size_t>(a)], 0});
    s.action.writes.push_back(op.variables[static_cast<std::size_t>(a + 1)]);
    op.steps.push_back(s);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const plan::KernelGraph graph(op);
  const plan::Plan p = plan::Scheduler(scheduler_options()).plan(graph);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  MESSAGE("planning a chain of 1000 dependent actions: " << seconds << " s, " << p.bundles().size() << " bundles");
  CHECK(seconds < 5.0);
  CHECK_NOTHROW(plan::check_plan(graph, p));
}

TEST_CASE("Readers: read_regular_file refuses /dev/zero, a FIFO and a folder at once, and a file over its limit") {
  const auto dir = std::filesystem::temp_directory_path() / ("korch-input-files-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string fifo = (dir / "fifo").string(), file = (dir / "op.json").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::ofstream(file) << "{\"name\": 1}";
  CHECK(contains(error_of([] { read_regular_file("/dev/zero", 1 << 20, "operation file"); }),
                 "cannot read operation file '/dev/zero': it is not a regular file"));
  CHECK(contains(error_of([&] { read_regular_file(fifo, 1 << 20, "plan file"); }), "it is not a regular file"));
  CHECK(contains(error_of([&] { read_regular_file(dir.string(), 1 << 20, "plan file"); }), "it is a folder"));
  CHECK(contains(error_of([&] { read_regular_file(file, 4, "plan file"); }), "it holds 11 bytes, more than the 4"));
  CHECK(contains(error_of([&] { read_regular_file((dir / "none").string(), 4, "plan file"); }), "No such file"));
  CHECK(read_regular_file(file, 11, "plan file") == "{\"name\": 1}");
  std::filesystem::remove_all(dir);
}

TEST_CASE("Generated drivers: the function name is a C++ identifier that is neither a keyword nor reserved") {
  for (const char* bad : {"int", "class", "and", "co_await", "_run", "_Run", "run__plan", "9lives", "run-plan", ""})
    CHECK_MESSAGE(!plan::identifier_problem(bad).empty(), bad);
  CHECK(contains(plan::identifier_problem("int"), "'int' is a C++ keyword"));
  CHECK(contains(plan::identifier_problem("__x"), "reserved"));
  for (const char* good : {"run", "korch_plan_run", "Run2", "integer"}) CHECK(plan::identifier_problem(good).empty());
}
