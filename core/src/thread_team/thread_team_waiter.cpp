// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam::wait: the caller blocks until the cycle is over. While items are queued and a
// thread of the cycle is parked, the caller runs that thread's transitions itself instead of
// waking it (docs/thread-team.md, "The waiter works"): its core would idle otherwise, and each
// hand-off it saves is a cross-thread wake-up, the dearest step of a short cycle.
#include <korch/thread_team.hpp>

#include "thread_team_internals.hpp"

#include <korch/error.hpp>

#include <fmt/format.h>

#include <thread>
#include <utility>

namespace korch {

using detail::lock_briefly_spinning;

void ThreadTeam::Impl::wait() {
  std::unique_lock<std::mutex> lk = detail::lock_spinning(mutex_);
  if (mode_ == TeamMode::Idle && !finishing_) {
    // The cycle may have ended before wait() was called (Spec: wait in Idle returns at once).
    if (pending_error_) std::rethrow_exception(std::exchange(pending_error_, nullptr));
    return;
  }
  if (terminating_) throw Error::format("team '{}' is being destroyed: wait() is not possible", name_);
  for (const auto& w : workers_) {
    if (w->thread.get_id() == std::this_thread::get_id()) {
      throw Error::format(
          "{}: wait() was called by the team's own thread {} (from its action routine '{}'), "
          "which would wait for itself forever; wait for a team from outside it",
          describe_state(), w->index, routine_.name());
    }
  }
  if (waiter_ != nullptr && detail::team_of_this_thread == &self_) {
    throw Error::format(
        "{}: wait() was called by the team's own thread {} (from its action routine '{}', run by "
        "the caller blocked in wait(), see TeamOptions::waiter_works), which would wait for itself "
        "forever; wait for a team from outside it",
        describe_state(), detail::team_thread_index, routine_.name());
  }
  if (waiter_ != nullptr) {
    throw Error::format(
        "{}: another thread is already blocked in wait() for this cycle; at most one thread "
        "may wait for a cycle",
        describe_state());
  }
  if (stranded()) std::rethrow_exception(stranded_error());
  WaitSlot slot;
  waiter_ = &slot;
  // Counted as blocked from here, polling and working included: a destructor that releases this
  // waiter must not free the team until the waiter has left (it waits for n_blocked_ to drop).
  ++n_blocked_;
  if (options_.waiter_works) {
    work_while_waiting(slot, lk);
    if (slot.team_destroyed_by_caller) {
      // A routine run here destroyed the team: its mutex is gone, only the error is left.
      lk.release();
      std::rethrow_exception(slot.error);
    }
  }
  // Napping threads of other teams this caller fed are not left to the end of their naps, whether
  // this caller now blocks or goes on (to wait for them, most likely).
  WakeList::notify_unnotified();
  if (options_.spin.count() > 0 && !slot.done) {
    const std::chrono::nanoseconds budget = waiter_spin_budget_;
    lk.unlock();
    detail::PollClock::time_point poll_ended{};
    const detail::PollResult poll = detail::poll_until(
        budget, [&slot] { return slot.done_hint.load(std::memory_order_acquire); }, &poll_ended);
    lock_briefly_spinning(lk);
    const bool slept = !slot.done;
    done_cv_.wait(lk, [&slot] { return slot.done; });
    waiter_spin_budget_ = detail::next_spin_budget(
        waiter_spin_budget_, options_.spin, poll,
        slept ? std::chrono::nanoseconds(detail::PollClock::now() - poll_ended) : std::chrono::nanoseconds(0));
  }
  done_cv_.wait(lk, [&slot] { return slot.done; });
  --n_blocked_;
  if (terminating_) done_cv_.notify_all();  // the destructor waits for everyone to leave
  if (slot.error) std::rethrow_exception(slot.error);
}

// Whether the cycle's queue is closed with items in it that nothing can ever run: no thread of the
// cycle is active or pending activation, no thread publisher can hand it one, and the caller in
// wait() may not join. Only increase_thread_count can still help, so wait() fails instead of
// blocking forever (docs/thread-team.md, "Failures"). A team with thread publishers is not judged
// here: whether they will still hand it threads is the configuration's business.
bool ThreadTeam::Impl::stranded() const {
  return mode_ == TeamMode::RunningClosed && n_waiting_ + n_computing_ == 0 && n_to_activate_ == 0 &&
         thread_publishers_.empty() && !(options_.waiter_works && options_.waiter_joins);
}

std::exception_ptr ThreadTeam::Impl::stranded_error() const {
  return std::make_exception_ptr(Error::format(
      "{}: wait() would never return: {} item(s) are queued and the queue is closed, but no thread of the cycle is "
      "active or pending activation and the team has no thread publisher; start the cycle with n_active >= 1 or "
      "call increase_thread_count() (the cycle is still running and can be completed that way)",
      describe_state(), queue_->size()));
}

// The caller takes the place of a parked thread of the cycle: it receives that thread's event
// (transitionThread for a Waiting thread, activateThread for an activated one still asleep) and
// runs run_items as that thread, with its index and execution-space instances, while the thread
// itself stays parked. The counters and transitions are the ones the thread would make, so the
// state machine cannot tell the difference; the number of threads running the cycle is unchanged.
// model: the caller's work_while_waiting loop and take_parked_thread.
void ThreadTeam::Impl::work_while_waiting(const WaitSlot& slot, std::unique_lock<std::mutex>& lk) {
  while (!slot.done && !terminating_ && !queue_->empty() &&
         (mode_ == TeamMode::RunningOpen || mode_ == TeamMode::RunningClosed)) {
    TeamEvent event;
    Worker* const w = take_parked_thread(event);
    if (w == nullptr) return;
    ++n_computing_;
    const ThreadTeam* const outer = std::exchange(detail::team_of_this_thread, &self_);
    const unsigned outer_index = std::exchange(detail::team_thread_index, w->index);
    const bool terminate = run_items(*w, lk, event);
    detail::team_of_this_thread = outer;
    detail::team_thread_index = outer_index;
    if (terminate) return;
  }
}

// A parked thread of the cycle whose event the caller can take, or nullptr: a Waiting thread that
// sleeps, else a thread that was sent its transitionThread or activateThread and has not received
// it yet: the caller is on a core and holds the mutex, while that thread may still wait for a core,
// or for the mutex. A thread whose event was taken finds no signal when it looks and parks again
// (polling first, see park).
ThreadTeam::Impl::Worker* ThreadTeam::Impl::take_parked_thread(TeamEvent& event) {
  // Joining adds a thread to the cycle; standing in for a thread that was already sent its event
  // only replaces it. So a caller that may join does that first.
  if (Worker* const w = join_in_place_of_idle_thread(event)) return w;
  for (std::size_t i = waiting_parked_.size(); i-- > 0;) {
    Worker* const w = waiting_parked_[i];
    if (!w->sleeping) continue;
    waiting_parked_.erase(waiting_parked_.begin() + static_cast<std::ptrdiff_t>(i));
    --n_waiting_;
    event = TeamEvent::transition_thread;
    return w;
  }
  // A thread that leaves its event to the caller (its core is contended) gives it up.
  for (const auto& w : workers_) {
    if (w->leaving_event && receive_in_place_of(*w, event)) return w.get();
  }
  // A thread was already sent its event: taking its place wastes that hand-off, so only when no
  // thread of the cycle is computing, i.e. nothing would move until that thread gets going.
  if (n_computing_ > 0) return nullptr;
  if (transitions_in_flight_ > 0) {
    for (const auto& w : workers_) {
      if (w->signal.load(std::memory_order_relaxed) == Worker::transition && receive_in_place_of(*w, event)) {
        return w.get();
      }
    }
  }
  if (n_to_activate_ == 0) return nullptr;
  Worker* pending = nullptr;
  for (const auto& w : workers_) {
    if (w->signal.load(std::memory_order_relaxed) != Worker::activate) continue;
    pending = w.get();
    if (w->sleeping) break;  // best: one that was never woken
  }
  if (pending == nullptr) return nullptr;
  receive_in_place_of(*pending, event);
  return pending;
}

// Takes the transitionThread or activateThread sent to `w` and not yet received by it, as the
// thread would receive it; false when `w` has none.
bool ThreadTeam::Impl::receive_in_place_of(Worker& w, TeamEvent& event) {
  const int signal = w.signal.load(std::memory_order_relaxed);
  if (signal == Worker::transition) {
    --transitions_in_flight_;
    --n_waiting_;
    event = TeamEvent::transition_thread;
  } else if (signal == Worker::activate) {
    --n_to_activate_;
    --n_idle_;
    event = TeamEvent::activate_thread;
  } else {
    return false;
  }
  w.signal.store(Worker::none, std::memory_order_relaxed);
  return true;
}

// TeamOptions::waiter_joins: the caller activates one more Idle thread (as increase_thread_count(1)
// would) and receives that activation itself.
ThreadTeam::Impl::Worker* ThreadTeam::Impl::join_in_place_of_idle_thread(TeamEvent& event) {
  if (!options_.waiter_joins || !thread_publishers_.empty() || idle_parked_.empty()) return nullptr;
  std::size_t i = idle_parked_.size() - 1;
  for (std::size_t j = idle_parked_.size(); j-- > 0;) {
    if (idle_parked_[j]->sleeping) {  // best: a thread that is asleep anyway
      i = j;
      break;
    }
  }
  Worker* const w = idle_parked_[i];
  idle_parked_.erase(idle_parked_.begin() + static_cast<std::ptrdiff_t>(i));
  ++n_to_activate_;
  observe(TeamEvent::increase_thread_count, -1);
  --n_to_activate_;
  --n_idle_;
  event = TeamEvent::activate_thread;
  return w;
}

}  // namespace korch
