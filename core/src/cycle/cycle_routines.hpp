// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the cycle runs on each node: a pipeline team's action (wrapped to trace and record each
// task when asked) or a helper's routine; and the distributor's push into a pipeline entry, the
// one way items enter a cycle from outside the teams.
#pragma once

#include "cycle_node.hpp"

#include <korch/bundle.hpp>
#include <korch/distributor.hpp>
#include <korch/record_replay.hpp>
#include <korch/trace.hpp>

#include <string>

namespace korch::detail {

// `action` itself, or a wrapper that records the task and times it in the trace.
ActionRoutine task_routine(const ActionRoutine& action, const std::string& node, Trace* trace, Recorder* recorder);

// The helper's routine; recorded when a recorder is attached.
ActionRoutine helper_routine(const CycleNode& node, Trace* trace, Recorder* recorder);

// The distributor's target for pipeline entry `node` (recorded pushes, batched enqueues).
DistributorTarget distributor_target(const std::string& node, DataType type, ThreadTeam* team, Recorder* recorder);

}  // namespace korch::detail
