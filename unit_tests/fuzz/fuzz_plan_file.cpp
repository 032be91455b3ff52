// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: a plan file (pipelines/include/korch/plan/plan.hpp), as Plan::from_json reads one
// that korch-plan wrote or a person edited. Rules checked: a bad file throws only korch::Error,
// whose message starts with "plan" (the errors name the step and field); an accepted plan reads
// back from its own to_json() unchanged; checked against the operation its declarations make
// (check_plan, with that operation's digest, so that the checks after the digest run), it throws
// only korch::Error starting with "plan of", and a plan it accepts runs every declared action
// exactly once, host_only ones on host stages and device_only ones on device stages.
#include "fuzz_support.hpp"

#include <korch/error.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/plan.hpp>
#include <korch/plan/plan_check.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <exception>
#include <map>
#include <optional>
#include <string>

using korch::fuzz::broken;

namespace {

// The operation a plan's declarations make: its actions in order, their variables in order of
// first mention, no barriers.
korch::plan::Operation operation_of(const korch::plan::Plan& plan) {
  korch::plan::Operation op;
  op.name = plan.operation;
  auto mention = [&op](const std::string& v) {
    if (std::find(op.variables.begin(), op.variables.end(), v) == op.variables.end()) op.variables.push_back(v);
  };
  for (const auto& a : plan.actions) {
    for (const auto& r : a.reads) mention(r.variable);
    for (const auto& w : a.writes) mention(w);
    korch::plan::Step step;
    step.action = a;
    op.steps.push_back(step);
  }
  return op;
}

void check_against_operation(korch::plan::Plan plan) {
  std::optional<korch::plan::KernelGraph> graph;
  try {
    graph.emplace(operation_of(plan));
  } catch (const korch::Error&) {
    return;  // the declarations make no operation (a name twice, a contradiction): nothing to check against
  }
  plan.operation_digest = korch::plan::operation_digest(graph->operation());
  try {
    korch::plan::check_plan(*graph, plan);
  } catch (const korch::Error& e) {
    if (std::string(e.what()).rfind("plan of", 0) != 0) broken("a check_plan error starts with \"plan of\"", e.what());
    return;
  } catch (const std::exception& e) {
    broken("only korch::Error escapes from check_plan", e.what());
  }
  std::map<std::string, int> runs;
  for (const korch::plan::PlannedBundle* bundle : plan.bundles())
    for (const auto& pipeline : bundle->pipelines)
      for (const auto& stage : pipeline.stages)
        for (const auto& name : stage.actions) {
          ++runs[name];
          const auto& hints = plan.action(name).hints;
          if ((hints.host_only && stage.placement != korch::plan::Placement::host) ||
              (hints.device_only && stage.placement != korch::plan::Placement::device))
            broken("an accepted plan keeps host_only and device_only actions on their side", name);
        }
  for (const auto& a : plan.actions)
    if (runs[a.action] != 1) broken("an accepted plan runs every action exactly once", a.action);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  korch::plan::Plan plan;
  try {
    plan = korch::plan::Plan::from_json(text);
  } catch (const korch::Error& e) {
    if (std::string(e.what()).rfind("plan", 0) != 0) broken("an error starts with \"plan\"", e.what());
    return 0;
  } catch (const std::exception& e) {
    broken("only korch::Error escapes from Plan::from_json", e.what());
  }
  const std::string json = plan.to_json();
  std::string again;
  try {
    again = korch::plan::Plan::from_json(json).to_json();
  } catch (const korch::Error& e) {
    broken("a plan reads back from its own to_json()", std::string(e.what()) + "\n" + json);
  }
  if (again != json) broken("a plan reads back unchanged", json + "\n---\n" + again);
  for (const korch::plan::PlannedBundle* bundle : plan.bundles())
    (void)korch::plan::configuration_dot(bundle->configuration);
  check_against_operation(plan);
  return 0;
}
