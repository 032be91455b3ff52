// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam: transitions shared by several events, with the team mutex held.
#include <korch/thread_team.hpp>

#include "thread_team_internals.hpp"

#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace korch {

using detail::describe_item;
using detail::lock_briefly_spinning;
using detail::message_of;

// ---------------------------------------------------------------------------------------------
// Transitions shared by several events (mutex held)

// A parked thread that is still polling takes an event without a system call; prefer it.
ThreadTeam::Impl::Worker* ThreadTeam::Impl::pop_preferring_awake(std::vector<Worker*>& parked) {
  if (parked.back()->sleeping) {
    for (std::size_t i = parked.size() - 1; i-- > 0;) {
      if (!parked[i]->sleeping) {
        std::swap(parked[i], parked.back());
        break;
      }
    }
  }
  Worker* const w = parked.back();
  parked.pop_back();
  return w;
}

// activateThread to n Idle threads: a polling thread sees its signal at once, a sleeping one is
// notified. Except in RunningOpen with an empty queue: a sleeping thread would wake only to find
// no item and park again as Waiting, so receive_activations_in_place makes that transition for it
// and it sleeps on, to be woken by transitionThread when an item comes. A cycle thus wakes no
// more threads than it gets items (docs/thread-team.md, "Waking for items"). A polling thread is
// signalled even then: making its transition in place too saves it a turn at the mutex on a quiet
// machine, but made the thread-team stress suite beside two busy loops a quarter slower.
void ThreadTeam::Impl::activate(unsigned n, WakeList& wake) {
  assert(n <= idle_parked_.size());
  const bool nothing_to_do = mode_ == TeamMode::RunningOpen && queue_->empty();
  for (unsigned i = 0; i < n; ++i) {
    Worker* const w = pop_preferring_awake(idle_parked_);
    ++n_to_activate_;
    if (nothing_to_do && w->sleeping) {
      activated_in_place_.push_back(w);
      continue;
    }
    w->signal.store(Worker::activate, std::memory_order_release);
    if (w->sleeping) wake.add(w);
  }
}

// The Spec transition a parked thread would make on its activateThread in RunningOpen with an
// empty queue (Idle -> Computing -> Waiting, see run_items), made by the thread that activated it,
// in the same critical section and after that event is observed: the model's thread step on
// activateThread taken at once, one of the interleavings the model checks.
void ThreadTeam::Impl::receive_activations_in_place() {
  for (Worker* w : activated_in_place_) {
    --n_to_activate_;
    --n_idle_;
    ++n_waiting_;
    waiting_parked_.push_back(w);
    observe(TeamEvent::activate_thread, static_cast<int>(w->index));
  }
  activated_in_place_.clear();
}

// Spec AwakenOnNoMoreWork: every Waiting thread receives transitionThread, on which it finds no
// item and goes Idle. A parked thread would only take the mutex for that (a sleeping one be woken
// for it), and the cycle would end only once the scheduler has run it; so
// receive_transitions_in_place makes the transition for it (also for a sleeping one whose
// transitionThread is still in flight, or one that leaves it to the caller, see park), and it polls
// or sleeps on. Not when going Idle does more:
// with a thread subscriber (the thread is forwarded) or an end-of-cycle step (the last computing
// thread runs it).
// A team that polls (spin > 0) and has none of them polling still has one woken, unless one is
// waking anyway or their polls have stopped paying off: the cycle does not wait for it, but it then
// polls for the next cycle's activation, which back-to-back short cycles need to run in parallel at
// all (docs/thread-team.md, "Waking for items").
void ThreadTeam::Impl::wake_all_waiting(WakeList& wake) {
  const bool in_place = thread_subscriber_ == nullptr && !routine_.has_end_of_cycle();
  for (Worker* w : waiting_parked_) {
    if (in_place) {
      waiting_in_place_.push_back(w);
      continue;
    }
    w->signal.store(Worker::transition, std::memory_order_release);
    ++transitions_in_flight_;
    if (w->sleeping) wake.add(w, true);  // a napping thread too: the cycle's end waits for it
  }
  waiting_parked_.clear();
  if (!in_place) return;
  if (transitions_in_flight_ > 0) {
    for (auto& w : workers_) {
      if ((w->sleeping || w->leaving_event) && w->signal.load(std::memory_order_relaxed) == Worker::transition) {
        w->signal.store(Worker::none, std::memory_order_relaxed);  // if notified, it finds none and parks again
        --transitions_in_flight_;
        waiting_in_place_.push_back(w.get());
      }
    }
  }
  if (options_.spin.count() > 0 && !waiting_in_place_.empty() &&
      std::all_of(waiting_in_place_.begin(), waiting_in_place_.end(),
                  [](const Worker* w) { return w->sleeping && !w->waking; })) {
    // The one whose recent polls paid off most. When even its poll budget has fallen below half the
    // limit (its polls were descheduled, or the next cycle came too late for them), the wake-up
    // would buy a short poll, and on a loaded machine it costs a scheduling delay and a preemption
    // of the thread that works: then nobody is woken.
    Worker* const best =
        *std::max_element(waiting_in_place_.begin(), waiting_in_place_.end(),
                          [](const Worker* a, const Worker* b) { return a->spin_budget < b->spin_budget; });
    if (best->spin_budget >= options_.spin / 2) {
      wake.add(best);
    }
  }
}

// The transitions wake_all_waiting left to be made in place, after the event that entered
// RunningNoMoreWork is observed: Waiting -> Idle as go_idle makes it, the last one ending the
// cycle when no thread computes. model: the thread step on transitionThread taken at once.
void ThreadTeam::Impl::receive_transitions_in_place(std::unique_lock<std::mutex>& lk) {
  for (std::size_t i = 0; i < waiting_in_place_.size(); ++i) {
    Worker* const w = waiting_in_place_[i];
    --n_waiting_;
    ++n_idle_;
    idle_parked_.push_back(w);
    if (n_computing_ == 0 && n_waiting_ == 0) {
      assert(i + 1 == waiting_in_place_.size());
      waiting_in_place_.clear();
      finish_cycle(lk, TeamEvent::transition_thread, static_cast<int>(w->index));
      return;
    }
    observe(TeamEvent::transition_thread, static_cast<int>(w->index));
  }
  waiting_in_place_.clear();
}

// transitionThread to one Waiting thread. At most one is in flight while items are queued: a thread
// that receives it and takes an item passes it on if more items wait (see run_items), so threads are
// woken as fast as there is work for them, and never in a herd that finds the queue empty.
void ThreadTeam::Impl::wake_one_waiting(WakeList& wake, bool even_napping) {
  Worker* const w = pop_preferring_awake(waiting_parked_);
  w->signal.store(Worker::transition, std::memory_order_release);
  ++transitions_in_flight_;
  if (w->sleeping) wake.add(w, even_napping);
}

// Hands n threads to the thread subscriber, if there is one. Releases the mutex for the call.
void ThreadTeam::Impl::forward_threads(std::unique_lock<std::mutex>& lk, unsigned n) {
  ThreadTeam::Impl* const subscriber = thread_subscriber_;
  if (subscriber == nullptr || n == 0) return;
  count_threads(&CycleReport::threads_forwarded, n);
  ++outbound_;
  lk.unlock();
  subscriber->receive_threads(n, *this);
  lock_briefly_spinning(lk);
  release_outbound();
}

// Counted in the running cycle's report and, once the cycle is over, in the last one's as well.
void ThreadTeam::Impl::count_threads(std::size_t CycleReport::*counter, unsigned n) {
  report_.*counter += n;
  if (mode_ == TeamMode::Idle && !finishing_) last_report_.*counter += n;
}

void ThreadTeam::Impl::release_outbound() {
  if (--outbound_ == 0 && n_blocked_ > 0) done_cv_.notify_all();
}

void ThreadTeam::Impl::wait_until(std::unique_lock<std::mutex>& lk, const std::function<bool()>& done) {
  ++n_blocked_;
  done_cv_.wait(lk, done);
  --n_blocked_;
  if (terminating_) done_cv_.notify_all();  // the destructor waits for everyone to leave
}

// RunningOpen after a close arrived: leave RunningOpen once every publisher has closed.
void ThreadTeam::Impl::after_close(std::unique_lock<std::mutex>& lk, TeamEvent event, int thread, WakeList& wake) {
  if (publisher_closes_pending_ + external_closes_pending_ > 0) {
    observe(event, thread);
  } else if (!queue_->empty()) {
    mode_ = TeamMode::RunningClosed;
    observe(event, thread);
    if (waiter_ != nullptr && stranded()) {  // the caller already blocked in wait() would never return
      waiter_->error = stranded_error();
      waiter_->done = true;
      waiter_->done_hint.store(true, std::memory_order_release);
      waiter_ = nullptr;
      done_cv_.notify_all();
    }
  } else if (n_waiting_ + n_computing_ > 0) {
    mode_ = TeamMode::RunningNoMoreWork;
    wake_all_waiting(wake);
    observe(event, thread);
    receive_transitions_in_place(lk);
  } else {
    finish_cycle(lk, event, thread);  // no thread is active: straight to Idle
  }
}

// model: finish_locked, S_FIN_THREADS, S_FIN_CLOSE, S_FIN_WAIT and release_waiter.
// The transition to Idle: all threads Idle, queue empty. Delivers the outputs (Spec IdleOutput)
// and then releases the waiter. Releases the mutex while calling other teams.
void ThreadTeam::Impl::finish_cycle(std::unique_lock<std::mutex>& lk, TeamEvent event, int thread) {
  assert(n_idle_ == n_max_ && queue_->empty());
  // Activations still in flight are not needed any more. Take them back and hand those threads on
  // now, as each would on receiving its activateThread in Idle (Spec IdleToIdle); this way Idle
  // never has activations in flight and the next start_cycle can use every thread.
  unsigned revoked = 0;
  if (n_to_activate_ > 0) {
    for (auto& w : workers_) {
      if (w->signal.load(std::memory_order_relaxed) == Worker::activate) {
        w->signal.store(Worker::none, std::memory_order_relaxed);
        idle_parked_.push_back(w.get());
        --n_to_activate_;
        ++revoked;
      }
    }
  }
  mode_ = TeamMode::Idle;
  finishing_ = true;
  observe(event, thread);

  forward_threads(lk, revoked);
  if (ThreadTeam::Impl* const subscriber = work_subscriber_) {
    // The finishing thread's own item went out before it became Idle; now close the subscriber.
    ++outbound_;
    lk.unlock();
    std::string refused = subscriber->receive_close(*this);
    lock_briefly_spinning(lk);
    release_outbound();
    if (!refused.empty()) record_error(std::move(refused), nullptr);
  }
  // Threads of this team that are still handing themselves on finish first.
  wait_until(lk, [this] { return outbound_ == 0; });
  finishing_ = false;

  std::exception_ptr error;
  if (report_.errors > 0) {
    const std::string message = fmt::format(
        "{}. Cycle {} of team '{}' (routine '{}'): {} items enqueued, {} processed, {} failed, {} "
        "skipped, {} undelivered; {} error(s). The team is Idle and can start another cycle",
        report_.error, report_.cycle, name_, report_.routine, report_.enqueued, report_.processed, report_.failed,
        report_.skipped, report_.undelivered, report_.errors);
    if (first_cause_) {
      try {
        std::rethrow_exception(first_cause_);
      } catch (...) {
        try {
          std::throw_with_nested(Error(message));
        } catch (...) {
          error = std::current_exception();
        }
      }
    } else {
      error = std::make_exception_ptr(Error(message));
    }
    first_cause_ = nullptr;
  }
  report_.finished = std::chrono::steady_clock::now();
  last_report_ = report_;
  if (cycle_started_ != detail::PollClock::time_point{}) {
    const std::chrono::nanoseconds took = detail::PollClock::now() - cycle_started_;
    const std::uint64_t items = report_.processed;
    const bool tiny_items = items > 0 && took < items * detail::tiny_item_time;
    for (const auto& w : workers_) w->tiny_items.store(tiny_items, std::memory_order_relaxed);
    recent_cycle_time_ = took;
  }
  if (waiter_ != nullptr) {
    waiter_->error = error;
    waiter_->done = true;
    waiter_->done_hint.store(true, std::memory_order_release);
    waiter_ = nullptr;
  } else {
    pending_error_ = error;
  }
  observe(TeamEvent::cycle_finished, thread);
  if (n_blocked_ > 0) done_cv_.notify_all();
}

void ThreadTeam::Impl::record_error(std::string message, std::exception_ptr cause) {
  ++report_.errors;
  if (report_.errors == 1) {
    report_.error = std::move(message);
    first_cause_ = std::move(cause);
  }
  cycle_failed_ = true;
}

void ThreadTeam::Impl::observe(TeamEvent event, int thread) {
  if (!observer_) return;
  const TeamTransition t{event,      thread,       cycle_,         mode_,         n_idle_,
                         n_waiting_, n_computing_, n_to_activate_, queue_->size()};
  try {
    observer_(t);
  } catch (...) {
    record_error(
        fmt::format("team '{}': the transition observer threw: {}", name_, message_of(std::current_exception())),
        std::current_exception());
  }
}

std::string ThreadTeam::Impl::describe_state() const {
  return fmt::format("team '{}' is {} (cycle {}, N_max {}, N_i {}, N_w {}, N_c {}, N_Q {}, {} pending activation)",
                     name_, to_string(mode_), cycle_, n_max_, n_idle_, n_waiting_, n_computing_, queue_->size(),
                     n_to_activate_);
}

void ThreadTeam::Impl::require_quiescent_idle(const char* what) const {
  if (terminating_) throw Error::format("team '{}' is being destroyed: {} is not possible", name_, what);
  if (mode_ != TeamMode::Idle) {
    throw Error::format("{}: {} needs an Idle team; call wait() first", describe_state(), what);
  }
  if (finishing_ || outbound_ > 0) {
    throw Error::format(
        "team '{}' is Idle but still delivering the outputs of cycle {}: {} needs "
        "them delivered; call wait() first",
        name_, cycle_, what);
  }
}

}  // namespace korch
