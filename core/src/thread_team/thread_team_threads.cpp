// ThreadTeam: the team threads (park, worker loop, running items, going Idle).
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
using detail::spin_until;

// ---------------------------------------------------------------------------------------------
// Team threads

void ThreadTeam::park(Worker& w, std::unique_lock<std::mutex>& lk) {
  if (w.signal.load(std::memory_order_relaxed) != Worker::none) return;
  if (options_.spin.count() > 0) {
    lk.unlock();
    spin_until(options_.spin,
               [&w] { return w.signal.load(std::memory_order_acquire) != Worker::none; });
    lock_briefly_spinning(lk);
  }
  while (w.signal.load(std::memory_order_relaxed) == Worker::none) {
    w.sleeping = true;
    w.cv.wait(lk);
    w.sleeping = false;
  }
}

namespace {
thread_local const ThreadTeam* team_of_this_thread = nullptr;
}  // namespace

const ThreadTeam* ThreadTeam::current() noexcept { return team_of_this_thread; }

void ThreadTeam::worker_main(Worker& w) {
  team_of_this_thread = this;
  std::unique_lock<std::mutex> lk(mutex_, std::defer_lock);
  lock_briefly_spinning(lk);
  for (;;) {
    park(w, lk);  // Idle threads wait for activateThread, Waiting threads for transitionThread
    const int signal = w.signal.exchange(Worker::none, std::memory_order_relaxed);
    if (signal == Worker::terminate || terminating_) return;
    if (signal == Worker::activate) {
      --n_to_activate_;
      if (mode_ == TeamMode::RunningOpen || mode_ == TeamMode::RunningClosed) {
        --n_idle_;
        ++n_computing_;  // until it finds out whether there is work (same critical section)
        if (run_items(w, lk, TeamEvent::activate_thread)) return;
      } else {
        // An activation the team no longer needs (RunningNoMoreWork): stay Idle and hand the
        // thread on to the thread subscriber (Spec IdleToIdle).
        idle_parked_.push_back(&w);
        observe(TeamEvent::activate_thread, static_cast<int>(w.index));
        forward_threads(lk, 1, true);
      }
    } else {  // transitionThread
      --transitions_in_flight_;
      --n_waiting_;
      ++n_computing_;
      if (run_items(w, lk, TeamEvent::transition_thread)) return;
    }
  }
}

// Entered counted as Computing, with the mutex held. Applies the routine to queued items until
// there are none, then leaves the thread Waiting (RunningOpen) or Idle (RunningNoMoreWork).
// Returns true when the thread must end (the team is being destroyed).
bool ThreadTeam::run_items(Worker& w, std::unique_lock<std::mutex>& lk, TeamEvent event) {
  const ActionContext context(id_, name_, w.index, cycle_, w.spaces, parameters_);
  const int thread = static_cast<int>(w.index);
  for (;;) {
    if (terminating_) return true;
    if (!queue_->empty()) {
      std::shared_ptr<DataItem> item = queue_->pop();
      WakeList wake;
      if (mode_ == TeamMode::RunningClosed && queue_->empty()) {
        // Spec Closed_Transition: dequeuing the last item ends RunningClosed in the same transition.
        mode_ = TeamMode::RunningNoMoreWork;
        wake_all_waiting(wake);  // Spec AwakenOnNoMoreWork
      } else if (!queue_->empty() && transitions_in_flight_ == 0 && !waiting_parked_.empty()) {
        wake_one_waiting(wake);  // more work than this thread: pass transitionThread on
      }
      const bool skip = cycle_failed_;
      ThreadTeam* const subscriber = skip ? nullptr : work_subscriber_;
      if (subscriber != nullptr) ++outbound_;
      observe(event, thread);
      lk.unlock();
      wake.notify();

      std::exception_ptr thrown;
      std::string failure;
      if (!skip) {
        try {
          routine_(context, *item);
        } catch (...) {
          thrown = std::current_exception();
          failure = fmt::format("team '{}' (id {}), cycle {}: action routine '{}' threw on item {} (thread {}): {}",
                                name_, id_, context.cycle(), routine_.name(), describe_item(*item),
                                w.index, message_of(thrown));
        }
      }
      // Spec CompMustEnqueue: the finished item goes to the work subscriber.
      std::string refused;
      if (subscriber != nullptr && !thrown) refused = subscriber->receive_item(item, *this);
      item.reset();

      lock_briefly_spinning(lk);
      if (subscriber != nullptr) release_outbound();
      if (skip) {
        ++report_.skipped;
      } else if (thrown) {
        ++report_.failed;
        record_error(std::move(failure), thrown);
      } else {
        ++report_.processed;
        if (subscriber != nullptr) {
          if (refused.empty()) {
            ++report_.forwarded;
          } else {
            ++report_.undelivered;
            record_error(std::move(refused), nullptr);
          }
        }
      }
      event = TeamEvent::computation_finished;
      continue;
    }
    if (mode_ == TeamMode::RunningOpen) {
      --n_computing_;
      ++n_waiting_;
      waiting_parked_.push_back(&w);
      observe(event, thread);
      return false;
    }
    // RunningNoMoreWork (RunningClosed never holds an empty queue).
    assert(mode_ == TeamMode::RunningNoMoreWork);
    go_idle(w, lk, event);
    return terminating_;
  }
}

// A Computing thread found no more work in RunningNoMoreWork and becomes Idle.
void ThreadTeam::go_idle(Worker& w, std::unique_lock<std::mutex>& lk, TeamEvent event) {
  // Spec ForwardThreads, while still counted as Computing, so that the last thread to become
  // Idle is the last to have delivered its outputs.
  forward_threads(lk, 1, true);
  if (terminating_) return;
  --n_computing_;
  ++n_idle_;
  idle_parked_.push_back(&w);
  if (n_computing_ == 0 && n_waiting_ == 0) {
    finish_cycle(lk, event, static_cast<int>(w.index));  // Spec NoMoreWork_TransitionToIdle
  } else {
    observe(event, static_cast<int>(w.index));
  }
}

}  // namespace korch
