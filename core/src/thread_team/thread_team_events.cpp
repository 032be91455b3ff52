// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam: the public events (start_cycle, threads, items, close_queue); wait() is in thread_team_waiter.cpp.
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
// Public events

void ThreadTeam::Impl::start_cycle(ActionRoutine routine, unsigned n_active, ActionParameters parameters) {
  if (!routine) {
    throw Error::format("team '{}': start_cycle was given an empty action routine '{}': give it a function", name_,
                        routine.name());
  }
  WakeList wake;
  {
    std::unique_lock<std::mutex> lk = detail::lock_spinning(mutex_);
    if (terminating_) throw Error::format("team '{}' is being destroyed: start_cycle is not possible", name_);
    // The caller may have learned that the last cycle ended from a subscriber, while this team is
    // still delivering its final outputs: let it finish.
    if (mode_ == TeamMode::Idle) wait_until(lk, [this] { return (!finishing_ && outbound_ == 0) || terminating_; });
    if (mode_ != TeamMode::Idle) {
      throw Error::format("{}: start_cycle needs Idle; call wait() for cycle {} first", describe_state(), cycle_);
    }
    if (pending_error_) {
      throw Error::format(
          "team '{}' is Idle, but cycle {} failed and its error has not been collected: call "
          "wait() (it throws that error) before starting another cycle. The error: {}",
          name_, cycle_, last_report_.error);
    }
    if (n_active > idle_parked_.size()) {
      throw Error::format("{}: start_cycle cannot activate {} threads; at most {} can be activated", describe_state(),
                          n_active, idle_parked_.size());
    }
    routine_ = std::move(routine);
    parameters_ = std::move(parameters);
    ++cycle_;
    report_ = CycleReport{};
    report_.cycle = cycle_;
    report_.routine = routine_.name();
    cycle_failed_ = false;
    end_of_cycle_ran_ = false;
    first_cause_ = nullptr;
    cycle_started_ =
        cycle_ % detail::tiny_items_timed_every == 1 ? detail::PollClock::now() : detail::PollClock::time_point{};
    for (PublisherLink& link : work_publishers_) link.closed = false;
    publisher_closes_pending_ = static_cast<unsigned>(work_publishers_.size());
    external_closes_pending_ = external_publishers_ > 0 ? external_publishers_ : (work_publishers_.empty() ? 1U : 0U);
    // model: the caller's start_cycle block (its BUG_MODE_AFTER_SIGNAL variant swaps these two).
    mode_ = TeamMode::RunningOpen;  // the mode changes before any thread is signalled
    activate(n_active, wake);
    observe(TeamEvent::start_cycle, -1);
    receive_activations_in_place();
  }
  wake.notify();
}

void ThreadTeam::Impl::increase_thread_count(unsigned n) {
  if (n == 0) return;
  WakeList wake;
  std::unique_lock<std::mutex> lk = detail::lock_spinning(mutex_);
  if (terminating_) throw Error::format("team '{}' is being destroyed: increase_thread_count is not possible", name_);
  if (mode_ == TeamMode::Idle) {
    // Spec: in Idle the threads go straight on to the thread subscriber.
    observe(TeamEvent::increase_thread_count, -1);
    forward_threads(lk, n);
    return;
  }
  if (n > idle_parked_.size()) {
    throw Error::format(
        "{}: increase_thread_count({}) asks for more threads than are Idle and not already "
        "pending activation ({}); a team may be given at most N_max threads in a cycle",
        describe_state(), n, idle_parked_.size());
  }
  if (mode_ == TeamMode::RunningNoMoreWork) {
    observe(TeamEvent::increase_thread_count, -1);
    forward_threads(lk, n);  // no more work here: hand the threads on at once
    return;
  }
  activate(n, wake);
  observe(TeamEvent::increase_thread_count, -1);
  receive_activations_in_place();
  lk.unlock();
  wake.notify();
}

void ThreadTeam::Impl::receive_threads(unsigned n, const ThreadTeam::Impl& from) {
  WakeList wake;
  std::unique_lock<std::mutex> lk = detail::lock_spinning(mutex_);
  if (terminating_ || n == 0) return;
  count_threads(&CycleReport::threads_received, n);
  if (mode_ == TeamMode::Idle) {
    observe(TeamEvent::threads_received, -1);
    forward_threads(lk, n);
    return;
  }
  if (n > idle_parked_.size()) {
    // Req ThreadBalance: the subscriber emits the error; it fails this cycle (wait() throws it).
    record_error(fmt::format("{}: thread publisher '{}' handed it {} thread(s), but only {} are Idle and not "
                             "pending activation (Req ThreadBalance): give the team more threads or start it "
                             "with fewer",
                             describe_state(), from.name_, n, idle_parked_.size()),
                 nullptr);
    observe(TeamEvent::threads_received, -1);
    return;
  }
  if (mode_ == TeamMode::RunningNoMoreWork) {
    observe(TeamEvent::threads_received, -1);
    forward_threads(lk, n);
    return;
  }
  activate(n, wake);
  observe(TeamEvent::threads_received, -1);
  receive_activations_in_place();
  lk.unlock();
  wake.notify();
}

void ThreadTeam::Impl::enqueue(std::shared_ptr<DataItem> item) {
  if (!item) throw Error::format("team '{}': enqueue was given a null item", name_);
  std::string refused = accept_item(item, Origin::external, "enqueue");
  if (!refused.empty()) throw Error(refused);
}

void ThreadTeam::Impl::enqueue(std::vector<std::shared_ptr<DataItem>> items) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i]) {
      throw Error::format("team '{}': enqueue was given {} items, item {} is null: none was enqueued", name_,
                          items.size(), i);
    }
  }
  if (items.empty()) return;
  TeamMode mode;
  const std::string state = push_if_open(items.data(), items.size(), Origin::external, mode);
  if (!state.empty()) {
    throw Error(refusal(state, mode, *items.front(), Origin::external, "enqueue") +
                fmt::format(" (none of the {} items was enqueued)", items.size()));
  }
}

std::string ThreadTeam::Impl::receive_item(std::shared_ptr<DataItem>& item, const ThreadTeam::Impl& from) {
  return accept_item(item, Origin::publisher, from.name_.c_str());
}

// Queues the item (moving it out of `item`) or returns why not (leaving `item` alone).
std::string ThreadTeam::Impl::accept_item(std::shared_ptr<DataItem>& item, Origin origin, const char* caller) {
  TeamMode mode;
  const std::string state = push_if_open(&item, 1, origin, mode);
  return state.empty() ? state : refusal(state, mode, *item, origin, caller);
}

// In RunningOpen, queues the n items in order in one critical section and returns an empty string;
// otherwise leaves them alone and returns the state that refuses them (`mode` is the mode seen).
// When no transitionThread is in flight, one Waiting thread receives it (notified if it sleeps).
std::string ThreadTeam::Impl::push_if_open(std::shared_ptr<DataItem>* items, std::size_t n, Origin origin,
                                           TeamMode& mode) {
  WakeList wake;
  {
    std::unique_lock<std::mutex> lk(mutex_, std::defer_lock);
    lock_briefly_spinning(lk);
    mode = mode_;
    if (mode_ != TeamMode::RunningOpen || terminating_) {
      return terminating_ ? fmt::format("team '{}' is being destroyed", name_) : describe_state();
    }
    for (std::size_t i = 0; i < n; ++i) {
      queue_->push(std::move(items[i]));
      ++report_.enqueued;
      if (transitions_in_flight_ == 0 && !waiting_parked_.empty()) {  // transitionThread to one Waiting thread
        wake_one_waiting(wake);  // notified only if it sleeps; a polling thread sees the signal
      }
      observe(origin == Origin::external ? TeamEvent::enqueue : TeamEvent::item_received, -1);
    }
  }
  wake.notify();
  return {};
}

std::string ThreadTeam::Impl::refusal(const std::string& state, TeamMode mode, const DataItem& item, Origin origin,
                                      const char* caller) const {
  const char* fix = mode == TeamMode::Idle
                        ? "start its cycle first (start a subscriber's cycle before its publishers' cycles)"
                        : "items can only be given before its queue is closed";
  if (origin == Origin::external) {
    return fmt::format("{}: {} of item {} refused: items are accepted only in RunningOpen; {}", state, caller,
                       describe_item(item), fix);
  }
  return fmt::format(
      "{}: it refused item {} from its work publisher '{}': items are accepted only in "
      "RunningOpen; {}",
      state, describe_item(item), caller, fix);
}

void ThreadTeam::Impl::close_queue() {
  WakeList wake;
  std::unique_lock<std::mutex> lk = detail::lock_spinning(mutex_);
  if (terminating_) throw Error::format("team '{}' is being destroyed: close_queue is not possible", name_);
  if (mode_ != TeamMode::RunningOpen) {
    throw Error::format("{}: close_queue needs RunningOpen; {}", describe_state(),
                        mode_ == TeamMode::Idle ? "start a cycle first (or the cycle has already ended)"
                                                : "the queue of this cycle is already closed");
  }
  if (external_closes_pending_ == 0) {
    if (external_publishers_ == 0) {
      throw Error::format(
          "{}: its queue is closed by its {} work publisher team(s), so close_queue() from "
          "other code is not expected; register such a feeder with add_external_work_publisher()",
          describe_state(), work_publishers_.size());
    }
    throw Error::format("{}: all {} external work publishers have already called close_queue() this cycle",
                        describe_state(), external_publishers_);
  }
  --external_closes_pending_;
  after_close(lk, TeamEvent::close_queue, -1, wake);
  lk.unlock();
  wake.notify();
}

std::string ThreadTeam::Impl::receive_close(const ThreadTeam::Impl& from) {
  WakeList wake;
  std::unique_lock<std::mutex> lk = detail::lock_spinning(mutex_);
  if (terminating_)
    return fmt::format("team '{}' is being destroyed: work publisher '{}' could not close it", name_, from.name_);
  auto link = std::find_if(work_publishers_.begin(), work_publishers_.end(),
                           [&from](const PublisherLink& l) { return l.team == &from; });
  if (mode_ != TeamMode::RunningOpen || link == work_publishers_.end()) {
    return fmt::format(
        "{}: its work publisher '{}' could not close its queue, which needs RunningOpen; start "
        "a subscriber's cycle before its publishers' cycles",
        describe_state(), from.name_);
  }
  if (link->closed) {
    return fmt::format("{}: work publisher '{}' closed its queue twice in one cycle", describe_state(), from.name_);
  }
  link->closed = true;
  --publisher_closes_pending_;
  after_close(lk, TeamEvent::publisher_closed, -1, wake);
  lk.unlock();
  wake.notify();
  return {};
}

}  // namespace korch
