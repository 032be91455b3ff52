// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cycle_routines.hpp"

#include <utility>

namespace korch::detail {

ActionRoutine task_routine(const ActionRoutine& action, const std::string& node, Trace* trace, Recorder* recorder) {
  if (!trace && !recorder) return action;
  const ActionRoutine* r = &action;  // the bundle outlives the cycle
  return action.wrapped([r, trace, recorder, node](const ActionContext& ctx, DataItem& item) {
    if (recorder) recorder->task(node, item, ctx.thread_index());
    TraceScope scope(trace, r->name().c_str(), "task", node, ctx.thread_index(),
                     trace ? item.describe() : std::string());
    (*r)(ctx, item);
  });
}

ActionRoutine helper_routine(const CycleNode& node, Trace* trace, Recorder* recorder) {
  ActionRoutine routine = node.helper->routine(trace);
  if (!recorder) return routine;
  return routine.wrapped([inner = routine, recorder, name = node.name](const ActionContext& ctx, DataItem& item) {
    recorder->task(name, item, ctx.thread_index());
    inner(ctx, item);
  });
}

DistributorTarget distributor_target(const std::string& node, DataType type, ThreadTeam* team, Recorder* recorder) {
  return DistributorTarget{node, type,
                           [team, recorder, node](std::shared_ptr<DataItem> item) {
                             if (recorder) recorder->push(node, *item);
                             team->enqueue(std::move(item));
                           },
                           [team]() { return team->snapshot().n_queued; },
                           [team, recorder, node](std::vector<std::shared_ptr<DataItem>> items) {
                             if (recorder)
                               for (const auto& item : items) recorder->push(node, *item);
                             team->enqueue(std::move(items));
                           }};
}

}  // namespace korch::detail
