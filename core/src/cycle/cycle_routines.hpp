// What the cycle runs on each node, and how items travel between nodes outside team links:
// a pipeline team's action (wrapped to trace and record each task when asked), a helper's
// routine, the hand-over of a helper's new items to the team after it, and the distributor's
// push into a pipeline entry.
#pragma once

#include "cycle_node.hpp"

#include <korch/bundle.hpp>
#include <korch/distributor.hpp>
#include <korch/record_replay.hpp>
#include <korch/trace.hpp>

#include <string>

namespace korch::detail {

// Hands an item to `target` (dropped when there is none: a helper at the end of a pipeline).
Emit emit_into(ThreadTeam* target);

// `action` itself, or a wrapper that records the task and times it in the trace.
ActionRoutine task_routine(const ActionRoutine& action, const std::string& node, Trace* trace, Recorder* recorder);

// The helper's routine, emitting into node.emits_to; recorded when a recorder is attached.
ActionRoutine helper_routine(const CycleNode& node, Trace* trace, Recorder* recorder);

// The distributor's target for pipeline entry `node` (recorded pushes, batched enqueues).
DistributorTarget distributor_target(const std::string& node, DataType type, ThreadTeam* team, Recorder* recorder);

}  // namespace korch::detail
