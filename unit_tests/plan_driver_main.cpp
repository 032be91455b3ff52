// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runs a driver that korch-plan generated (linked in as korch_plan_run) and checks it against the
// Executor running the same plan file and against program order (docs/planner.md, "Generated
// drivers"): bitwise the same interiors and the same reductions all three ways, with the fills done
// through hooks.fill_guards and again with hooks.filling_order (fills inside the next bundle's
// cycle), where the driver must fill inside the same cycles as the Executor.
//   korch-test-plan-driver-NAME OPERATION.json PLAN.json
#include "test_plan_support.hpp"

#include <korch/error.hpp>
#include <korch/plan/action_registry.hpp>
#include <korch/plan/kernel_graph.hpp>

#include <Kokkos_Core.hpp>

#include <fstream>
#include <iostream>
#include <sstream>

void korch_plan_run(korch::Runtime& runtime, korch::DataSource& source, const korch::plan::ActionRegistry& registry);

namespace {

std::string read(const char* path) {
  std::ifstream in(path);
  if (!in) throw korch::Error::format("cannot read '{}'", path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int compare(const char* operation_file, const char* plan_file) {
  using namespace korch;
  const auto operation = plan::Operation::from_json(read(operation_file));
  const auto plan = plan::Plan::from_json(read(plan_file));
  const int n_vars = static_cast<int>(operation.variables.size());
  std::vector<std::string> driven_log, executed_log, reference_log;

  plan::ActionRegistry registry;
  for (const auto& [name, body] : test::bodies_of(operation)) registry.add(name, body);
  registry.hooks = test::logging_hooks(driven_log);

  Grid driven(test::plan_grid_spec(n_vars)), executed(test::plan_grid_spec(n_vars)),
      reference(test::plan_grid_spec(n_vars));
  test::paint(driven);
  test::paint(executed);
  test::paint(reference);
  Runtime runtime(RuntimeOptions{6, 2, 6, 1, {}, 0, 0});
  korch_plan_run(runtime, driven, registry);
  plan::Executor(operation, test::bodies_of(operation), test::logging_hooks(executed_log)).run(plan, runtime, executed);
  plan::Executor(operation, test::bodies_of(operation), test::logging_hooks(reference_log))
      .run_sequentially(plan::KernelGraph(operation), reference);

  const int vs_executor = test::differing_cells(driven, executed);
  const int vs_program_order = test::differing_cells(driven, reference);
  std::cout << "operation '" << operation.name << "': " << plan.bundles().size() << " bundles, " << driven_log.size()
            << " reductions; cells differing from the Executor: " << vs_executor
            << ", from program order: " << vs_program_order << "\n";
  bool ok = vs_executor == 0 && vs_program_order == 0;

  // With hooks.filling_order, a fill directly before a bundle runs inside its cycle.
  struct Filled {
    Grid grid;
    test::FillingOrder order;
    int before = 0;  // fills through hooks.fill_guards
    std::vector<std::string> log;
    explicit Filled(int n) : grid(test::plan_grid_spec(n)), order(grid) { test::paint(grid); }
    plan::ExecutionHooks hooks() {
      plan::ExecutionHooks h = test::logging_hooks(log);
      h.fill_guards = [this](DataSource& source, const std::vector<int>& vars) {
        ++before;
        test::fill_periodic(as_grid(source), vars);
      };
      h.filling_order = [this](DataSource&, const std::vector<int>& vars) -> BlockIterator* {
        order.set_variables(vars);
        return &order;
      };
      return h;
    }
  } driven_inside(n_vars), executed_inside(n_vars);
  plan::ActionRegistry ordered;
  for (const auto& [name, body] : test::bodies_of(operation)) ordered.add(name, body);
  ordered.hooks = driven_inside.hooks();
  korch_plan_run(runtime, driven_inside.grid, ordered);
  plan::Executor(operation, test::bodies_of(operation), executed_inside.hooks())
      .run(plan, runtime, executed_inside.grid);
  bool fill_before_bundle = false;
  for (std::size_t i = 0; i + 1 < plan.steps.size(); ++i)
    fill_before_bundle = fill_before_bundle || (plan.steps[i].kind == plan::StepKind::guard_fill &&
                                                plan.steps[i + 1].kind == plan::StepKind::bundle);
  const int inside_vs_program_order = test::differing_cells(driven_inside.grid, reference);
  std::cout << "with filling_order: " << driven_inside.order.cycles
            << " fills inside a cycle (the Executor: " << executed_inside.order.cycles << "), " << driven_inside.before
            << " before a reduction or at the end (the "
            << "Executor: " << executed_inside.before
            << "); cells differing from program order: " << inside_vs_program_order << "\n";
  if (inside_vs_program_order != 0 || driven_inside.log != reference_log || executed_inside.log != reference_log) {
    std::cout << "with filling_order the driver's state or reductions differ from program order\n";
    ok = false;
  }
  if (driven_inside.order.cycles != executed_inside.order.cycles || driven_inside.before != executed_inside.before) {
    std::cout << "with filling_order the driver fills elsewhere than the Executor\n";
    ok = false;
  }
  if (fill_before_bundle && driven_inside.order.cycles == 0) {
    std::cout << "the plan fills guard cells directly before a bundle, but the driver never filled inside a cycle\n";
    ok = false;
  }
  if (driven_log != executed_log || driven_log != reference_log) {
    std::cout << "the reductions differ\n";
    ok = false;
  }
  if (driven_log.empty() && executed_log.empty() && plan.bundles().empty()) {
    std::cout << "the plan has nothing to run\n";
    ok = false;
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " OPERATION.json PLAN.json\n";
    return 2;
  }
  Kokkos::ScopeGuard kokkos(argc, argv);
  try {
    return compare(argv[1], argv[2]);
  } catch (const std::exception& e) {
    std::cerr << argv[0] << ": " << e.what() << "\n";
    return 1;
  }
}
