// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How one candidate bundle is laid out (docs/planner.md, "Scheduling"): its pipelines, their
// placements and stages, and the teams they need. Used by the scheduler to test each action it
// might add, and to build the bundle's configuration once the bundle is complete.
#pragma once

#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/plan.hpp>
#include <korch/plan/scheduler.hpp>

#include <optional>
#include <vector>

namespace korch::plan::detail {

// `members`: action indices in program order, with no barrier dependence among them. nullopt when
// the actions cannot share a bundle (a pipeline both host_only and device_only, or more teams than
// the runtime has even after fusion).
std::optional<std::vector<PlannedPipeline>> lay_out(const KernelGraph& graph, const std::vector<int>& members,
                                                    const SchedulerOptions& options);

// The korch configuration of a laid-out bundle; fills in the pipelines' team names.
Configuration make_configuration(const std::string& name, std::vector<PlannedPipeline>& pipelines,
                                 const SchedulerOptions& options);

}  // namespace korch::plan::detail
