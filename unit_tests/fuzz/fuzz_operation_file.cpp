// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: korch-plan's input, an operation file (pipelines/include/korch/plan/operation.hpp),
// read and then planned as korch-plan plans it. Rules checked: a bad file throws only korch::Error,
// whose message starts with "operation" (the errors name the operation, step, action and field);
// an accepted operation reads back from its own to_json() unchanged; its kernel graph and plan are
// built without any other exception, and the plan reads back from its own to_json() unchanged and
// passes check_plan against the operation.
#include "fuzz_support.hpp"

#include <korch/error.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/operation.hpp>
#include <korch/plan/plan.hpp>
#include <korch/plan/plan_check.hpp>
#include <korch/plan/scheduler.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

using korch::fuzz::broken;

namespace {

void plan_on(const korch::plan::KernelGraph& graph, unsigned teams, bool devices, bool fusion) {
  korch::plan::SchedulerOptions options;
  options.shape.n_teams = teams;
  options.shape.threads_per_team = 2;
  options.cost.devices = devices;
  options.fuse_short = fusion;
  korch::plan::Plan plan;
  try {
    plan = korch::plan::Scheduler(options).plan(graph);
  } catch (const korch::Error&) {
    return;  // an operation the runtime's shape cannot hold: korch-plan says so and exits 1
  }
  const std::string text = plan.to_json();
  std::string again;
  try {
    const korch::plan::Plan back = korch::plan::Plan::from_json(text);
    again = back.to_json();
    korch::plan::check_plan(graph, back);
  } catch (const korch::Error& e) {
    broken("a plan reads back from its own to_json() and passes check_plan", std::string(e.what()) + "\n" + text);
  }
  if (again != text) broken("a plan reads back unchanged", text + "\n---\n" + again);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  korch::plan::Operation operation;
  try {
    operation = korch::plan::Operation::from_json(text);
  } catch (const korch::Error& e) {
    if (std::string(e.what()).rfind("operation", 0) != 0) broken("an error starts with \"operation\"", e.what());
    return 0;
  } catch (const std::exception& e) {
    broken("only korch::Error escapes from Operation::from_json", e.what());
  }
  const std::string json = operation.to_json();
  try {
    if (korch::plan::Operation::from_json(json).to_json() != json) broken("an operation reads back unchanged", json);
  } catch (const korch::Error& e) {
    broken("an operation reads back from its own to_json()", std::string(e.what()) + "\n" + json);
  }
  try {
    const korch::plan::KernelGraph graph(operation);
    (void)graph.to_json();
    (void)graph.to_dot();
    plan_on(graph, 6, true, true);
    plan_on(graph, 1, false, false);
    plan_on(graph, 3, true, false);
  } catch (const korch::Error& e) {
    broken("an accepted operation is planned", e.what());
  } catch (const std::exception& e) {
    broken("only korch::Error escapes from planning", e.what());
  }
  return 0;
}
