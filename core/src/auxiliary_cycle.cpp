// Runtime::run_auxiliary: one routine, one thread of one team, no items (auxiliary_cycle.hpp).
#include "cycle/cycle_routines.hpp"

#include <korch/error.hpp>
#include <korch/runtime.hpp>

#include <fmt/format.h>

#include <exception>
#include <memory>
#include <string>

namespace korch {

void Runtime::run_auxiliary(const AuxiliaryRoutine& routine, AuxiliaryPlacement where, ActionParameters parameters) {
  if (routine.name().empty()) throw Error("runtime: run_auxiliary: the routine has no name: name it, errors and traces need one");
  if (!routine) throw Error::format("runtime: run_auxiliary('{}'): the routine is empty: give it a function", routine.name());
  if (where.team >= teams_.size()) {
    throw Error::format("runtime: run_auxiliary('{}') on team index {}: there are {} teams (0 .. {}): choose one of them",
                        routine.name(), where.team, teams_.size(), teams_.size() - 1);
  }
  const Turn turn = take_turn("run_auxiliary", routine.name());
  ThreadTeam& team = *teams_[where.team];
  // The fence is part of the routine: a failed fence fails the call like the routine's own error,
  // and the trace's span covers the work the routine launched.
  const ActionRoutine action(routine.name(), [&routine, space = where.space](const ActionContext& ctx, DataItem&) {
    routine(ctx);
    if (space == AuxiliarySpace::device) ctx.device_space().fence();
    else ctx.host_space().fence();
  });
  std::exception_ptr failure;
  bool started = false;
  try {
    team.start_cycle(detail::task_routine(action, team.name(), trace_, nullptr), 1, std::move(parameters));
    started = true;
    team.enqueue(std::make_shared<AuxiliaryCall>(routine.name()));
  } catch (...) {
    failure = std::current_exception();
  }
  if (started) {
    // Closed and waited for also after a failed enqueue: the team goes back to Idle either way.
    try {
      team.close_queue();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
    try {
      team.wait();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (!failure) return;
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  try {
    std::rethrow_exception(failure);
  } catch (...) {
    std::throw_with_nested(Error::format("runtime: auxiliary routine '{}' on '{}' failed: {}", routine.name(),
                                         team.name(), what));
  }
}

}  // namespace korch
