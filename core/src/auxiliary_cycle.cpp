// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runtime::run_auxiliary: one routine, one thread of one team, no items (auxiliary_cycle.hpp).
#include "cycle/cycle_routines.hpp"
#include "runtime_state.hpp"

#include <korch/error.hpp>
#include <korch/excerpt.hpp>
#include <korch/runtime.hpp>

#include <fmt/format.h>

#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <string>

namespace korch {

void Runtime::run_auxiliary(const AuxiliaryRoutine& routine, AuxiliaryPlacement where, ActionParameters parameters) {
  if (routine.name().empty())
    throw Error("runtime: run_auxiliary: the routine has no name: name it, errors and traces need one");
  if (!routine)
    throw Error::format("runtime: run_auxiliary('{}'): the routine is empty: give it a function",
                        excerpt(routine.name()));
  const std::size_t n_teams = state_->teams.size();
  if (where.team >= n_teams) {
    throw Error::format(
        "runtime: run_auxiliary('{}') on team index {}: there are {} teams (0 .. {}): choose one of them",
        excerpt(routine.name()), where.team, n_teams, n_teams - 1);
  }
  const State::Turn turn = State::take_turn(state_, "run_auxiliary", routine.name());
  // From here on `this` may be destroyed by the routine: only the turn's state is used.
  State& state = turn.state();
  ThreadTeam& team = [&]() -> ThreadTeam& {  // started now if no cycle used it yet
    std::lock_guard<std::mutex> lock(state.teams_mutex);
    return state.started(state.teams, "team", where.team);
  }();
  // The fence is part of the routine: a failed fence fails the call like the routine's own error,
  // and the trace's span covers the work the routine launched. `done` is set when the routine has
  // returned or thrown.
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  const ActionRoutine action(routine.name(),
                             [&routine, space = where.space, done](const ActionContext& ctx, DataItem&) {
                               struct Signal {
                                 std::promise<void>& p;
                                 ~Signal() { p.set_value(); }
                               } signal{*done};
                               routine(ctx);
                               if (space == AuxiliarySpace::device)
                                 ctx.device_space().fence();
                               else
                                 ctx.host_space().fence();
                             });
  std::exception_ptr failure;
  bool started = false;
  try {
    team.start_cycle(detail::task_routine(action, team.name(), state.trace, nullptr), 1, std::move(parameters));
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
    // The routine runs on the team's thread: the caller sleeps until it is done (or the team went
    // Idle without running it) before wait(), where it would run a queued item itself
    // (TeamOptions::waiter_works).
    while (!failure && finished.wait_for(std::chrono::milliseconds(1)) != std::future_status::ready &&
           team.mode() != TeamMode::Idle) {
    }
    try {
      team.wait();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (state.destroyed_in_cycle.load()) State::finish_if_destroyed(state, "run_auxiliary", routine.name(), failure);
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
    std::throw_with_nested(Error::format("runtime: auxiliary routine '{}' on '{}' failed: {}", excerpt(routine.name()),
                                         team.name(), what));
  }
}

}  // namespace korch
