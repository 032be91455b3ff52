// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam: the team threads (park, worker loop, running items, going Idle).
#include <korch/thread_team.hpp>

#include "thread_team_internals.hpp"

#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <utility>

namespace korch {

using detail::describe_item;
using detail::lock_briefly_spinning;
using detail::message_of;

// ---------------------------------------------------------------------------------------------
// Team threads

// Waits for the thread's signal: polls it first (spin > 0), then sleeps. A thread that is woken
// polls again, also when its event was taken back meanwhile (a caller stood in for it) or when it was
// woken only to poll (see wake_all_waiting): it has a core now, and sleeping on would leave it asleep
// for the next cycle, whose wake-up costs far more than a poll (docs/thread-team.md, "Waiting").
// A parked thread may outlive its team (see ~ThreadTeam): it reads the team's state only while it
// holds the mutex and has seen that it is not terminated, and returns as soon as it is.
void ThreadTeam::Impl::park(Worker& w, std::unique_lock<std::mutex>& lk) {
  if (w.signal.load(std::memory_order_relaxed) == Worker::terminate) return;
  w.parked = true;
  step_off_waker_core(w, lk);
  // The mutex was released for the move: a parked thread is not waited for, so the team may be gone.
  if (w.signal.load(std::memory_order_relaxed) == Worker::terminate) return;
  if (options_.spin.count() == 0) {
    sleep_until_signalled(w, lk);
    if (w.signal.load(std::memory_order_relaxed) != Worker::terminate) w.parked = false;
    return;
  }
  do {
    while (w.signal.load(std::memory_order_relaxed) == Worker::none) {
      // Still on the core of the thread that woke it (it may run on no other, or moved a moment
      // ago): a poll would keep that thread, which sends the next event, off its core, so sleep at
      // once (docs/thread-team.md, "Waiting").
      const bool beside_waker = w.waker_cpu >= 0 && detail::current_cpu() == w.waker_cpu;
      const std::chrono::nanoseconds leave_window = options_.spin;
      lk.unlock();
      detail::PollClock::time_point poll_ended{};
      detail::PollResult poll;
      for (;;) {
        w.event_left_unlocked = false;
        poll = detail::poll_until(
            beside_waker ? std::chrono::nanoseconds(0) : w.spin_budget,
            [&w] { return w.signal.load(std::memory_order_acquire) != Worker::none; }, &poll_ended);
        if (poll == detail::PollResult::descheduled) w.contention.note_descheduled_poll(poll_ended);
        if (poll != detail::PollResult::ready) break;
        give_caller_time_to_enqueue(w);
        // The caller took the last event this thread left it: on a contended core, leave this one
        // too before taking the mutex at all (see leave_event_to_caller), and poll on if it is taken.
        w.event_left_unlocked = w.caller_took_left_event && leaves_event(w);
        if (!w.event_left_unlocked || !caller_takes_event(w, leave_window)) break;
      }
      lock_briefly_spinning(lk);
      // The signal seen while polling may have been taken back meanwhile (finish_cycle, a caller
      // standing in): only the signal under the mutex counts, and the thread polls again for the next.
      if (poll == detail::PollResult::ready && w.signal.load(std::memory_order_relaxed) == Worker::none) continue;
      const bool slept = sleep_until_signalled(w, lk);
      if (w.signal.load(std::memory_order_relaxed) == Worker::terminate) return;  // the team may be gone
      w.spin_budget = detail::next_spin_budget(w.spin_budget, options_.spin, poll,
                                               slept && poll != detail::PollResult::ready
                                                   ? std::chrono::nanoseconds(detail::PollClock::now() - poll_ended)
                                                   : std::chrono::nanoseconds(0));
    }
  } while (leave_event_to_caller(w, lk));
  if (w.signal.load(std::memory_order_relaxed) != Worker::terminate) w.parked = false;
}

// With its event in hand (under the mutex, not yet received): on a contended core the thread first
// leaves the event for a moment to the caller that feeds the team, which takes it in wait() and runs
// the items on its own core (docs/thread-team.md, "Leave the event to the caller"). A thread that
// ran them there would be preempted by the other threads of its core now and then while the cycle
// waits for it. The caller takes its place, so the cycle keeps the number of threads it was given;
// not where the caller would join the cycle beside it. Only for a team fed by the caller directly,
// while no caller waits yet (one that waits already has had its chance) and items are queued; at
// most one poll window (TeamOptions::spin) long, after which the thread takes the event itself.
// While the caller keeps taking the events a thread leaves, the thread leaves the next one already
// when its poll sees it, before it takes the mutex (park): it then costs the caller no turn at the
// mutex at all. Returns true when the event was taken meanwhile: the thread parks again. Unlocks
// for the poll: the team may be gone afterwards (see ~ThreadTeam), which the caller checks.
bool ThreadTeam::Impl::leave_event_to_caller(Worker& w, std::unique_lock<std::mutex>& lk) {
  const bool left_already = std::exchange(w.event_left_unlocked, false);
  const int event = w.signal.load(std::memory_order_relaxed);
  if (event != Worker::activate && event != Worker::transition) return false;
  // A caller that joins the cycle (TeamOptions::waiter_joins) works beside this thread, not instead of it.
  const bool caller_joins = options_.waiter_joins && thread_publishers_.empty() && !idle_parked_.empty();
  const bool caller_may_take = options_.waiter_works && waiter_ == nullptr && work_publishers_.empty() &&
                               !caller_joins && !queue_->empty() &&
                               (mode_ == TeamMode::RunningOpen || mode_ == TeamMode::RunningClosed);
  // Left already before the mutex (and not taken within the window), or not to be left.
  if (left_already || !caller_may_take || !leaves_event(w)) {
    w.caller_took_left_event = false;
    return false;
  }
  const std::chrono::nanoseconds window = options_.spin;
  w.leaving_event = true;
  lk.unlock();
  caller_takes_event(w, window);
  lock_briefly_spinning(lk);
  w.leaving_event = false;
  w.caller_took_left_event = w.signal.load(std::memory_order_relaxed) == Worker::none;
  return w.caller_took_left_event;
}

// Whether the thread leaves the event it has (or polls for) to the caller: on a contended core
// (docs/thread-team.md, "Leave the event to the caller"), and the cycle's activation after a cycle of
// tiny items (docs/thread-team.md, "Tiny items"), which the caller runs alone faster than it could
// hand them across cores to this thread. Reads only the thread's own record (see park).
bool ThreadTeam::Impl::leaves_event(const Worker& w) {
  if (w.contention.contended(detail::PollClock::now())) return true;
  return w.signal.load(std::memory_order_relaxed) == Worker::activate && w.tiny_items.load(std::memory_order_relaxed);
}

// Unlocked: polls for at most `window` for the thread's event (activateThread or transitionThread)
// to be taken by a caller in wait(). Returns whether it was. Reads only the thread's own record.
bool ThreadTeam::Impl::caller_takes_event(Worker& w, std::chrono::nanoseconds window) {
  const int event = w.signal.load(std::memory_order_acquire);
  if (event != Worker::activate && event != Worker::transition) return false;
  detail::PollClock::time_point poll_ended{};
  const detail::PollResult poll = detail::poll_until(
      window, [&w, event] { return w.signal.load(std::memory_order_acquire) != event; }, &poll_ended);
  if (poll == detail::PollResult::descheduled) w.contention.note_descheduled_poll(poll_ended);
  return w.signal.load(std::memory_order_acquire) == Worker::none;
}

// A thread that runs on the core of the thread that last woke it, when it goes to wait, moves to
// another core (waker_core.hpp): woken there again, it would preempt that thread. Unlocks for the
// move. Reads only the thread's own record: the team may be gone (see ~ThreadTeam).
void ThreadTeam::Impl::step_off_waker_core(Worker& w, std::unique_lock<std::mutex>& lk) {
  const int waker_cpu = w.waker_cpu;
  if (waker_cpu < 0 || detail::current_cpu() != waker_cpu) return;
  lk.unlock();
  w.waker_core.move_off(waker_cpu);
  lock_briefly_spinning(lk);
}

// An activation seen while polling usually comes from start_cycle, with the caller's first
// enqueue a moment later. Taking the mutex at once would only find the queue empty, park the thread
// as Waiting and hold up that enqueue; so a polling thread first watches the queue for a moment
// (at most 2 us, unlocked, a hint only) and then takes the mutex and finds the item.
// Reads only the thread's own record: the team may be gone (see ~ThreadTeam).
void ThreadTeam::Impl::give_caller_time_to_enqueue(const Worker& w) {
  const std::atomic<std::size_t>& queued = *w.queued;
  auto empty = [&queued] { return queued.load(std::memory_order_relaxed) == 0; };
  if (w.signal.load(std::memory_order_relaxed) != Worker::activate || !empty()) return;
  const auto deadline = detail::PollClock::now() + std::chrono::microseconds(2);
  for (unsigned i = 1; empty() && w.signal.load(std::memory_order_relaxed) == Worker::activate; ++i) {
    cpu_relax();
    if ((i & 15U) == 0 && detail::PollClock::now() >= deadline) return;
  }
}

// Naps in a row that find no event and no new cycle before a thread sleeps until it is woken: the
// team's caller has stopped starting cycles, and a nap costs a scheduling round each time.
constexpr unsigned max_naps_in_vain = 16;

// Items at least this long pay for waking a napping thread to run the next ones beside the thread
// that passes the transition on: a wake-up costs the sender ~13 us and the woken thread waits for
// a core about as long again on a contended machine.
constexpr std::chrono::microseconds item_worth_a_wakeup{30};

// Whether the thread, about to sleep, naps instead (TeamOptions::contended_nap, docs/thread-team.md,
// "Nap on a contended core"): its core is contended, and a caller in wait() can take its events.
// A team whose cycles have stopped (naps in vain) lets its threads sleep until woken again. Only
// where the team's cycles are long (TeamOptions::naps_per_cycle): a thread napping when a cycle
// starts joins it when the nap ends, and a nap as long as a short cycle leaves it to the caller.
// Before the first timed cycle has ended the length is unknown, and the threads do not nap: a
// thread that napped from its start could sleep through the first cycles of a team of short ones.
bool ThreadTeam::Impl::may_nap(const Worker& w) const {
  const bool cycles_long =
      options_.naps_per_cycle == 0 ||
      (recent_cycle_time_.count() > 0 && recent_cycle_time_ >= options_.naps_per_cycle * options_.contended_nap);
  return options_.contended_nap.count() > 0 && options_.waiter_works && !options_.waiter_joins &&
         work_publishers_.empty() && thread_publishers_.empty() && w.naps_in_vain < max_naps_in_vain && cycles_long &&
         w.contention.contended(detail::PollClock::now());
}

// Sleeps until the thread has a signal, or is woken to poll. Returns whether it slept.
bool ThreadTeam::Impl::sleep_until_signalled(Worker& w, std::unique_lock<std::mutex>& lk) {
  WakeList::notify_unnotified();  // the napping threads it passed events on to, before it sleeps itself
  bool slept = false;
  while (w.signal.load(std::memory_order_relaxed) == Worker::none) {
    w.sleeping = true;
    slept = true;
    const bool nap = may_nap(w);
    const std::uint64_t cycle = cycle_;
    const auto nap_end = detail::PollClock::now() + options_.contended_nap;
    bool slept_out = false;
    if (nap) {
      // Events sent meanwhile mostly come without a notify (WakeList::add).
      w.napping = true;
      slept_out = w.cv.wait_until(lk, nap_end) == std::cv_status::timeout;
      w.napping = false;
    } else {
      w.naps_in_vain = 0;
      w.cv.wait(lk);
    }
    w.sleeping = false;
    // A thread parked when the team was destroyed is not waited for (~ThreadTeam): from here on
    // it may touch only its Worker and the mutex, which it owns too.
    if (w.signal.load(std::memory_order_relaxed) == Worker::terminate) {
      if (w.waking) detail::waking_threads.fetch_sub(1, std::memory_order_relaxed);
      return slept;
    }
    if (nap) {
      // A nap that ran late ended on a core still contended: evidence, as a late wake-up is.
      if (slept_out) w.contention.note_wakeup(nap_end, detail::PollClock::now());
      const bool in_vain = w.signal.load(std::memory_order_relaxed) == Worker::none && cycle_ == cycle;
      w.naps_in_vain = in_vain ? w.naps_in_vain + 1 : 0;
    }
    if (w.waking) {  // running again (even if its event was taken back meanwhile)
      w.waking = false;
      w.contention.note_wakeup(w.notified_at, detail::PollClock::now());
      detail::waking_threads.fetch_sub(1, std::memory_order_relaxed);
      count_threads(&CycleReport::wakeups, 1);
      if (options_.spin.count() > 0) break;  // back to polling (see park)
    }
  }
  return slept;
}

const ThreadTeam* ThreadTeam::current() noexcept { return detail::team_of_this_thread; }

void ThreadTeam::Impl::worker_main(Worker& w, std::mutex& mutex) {
  detail::team_of_this_thread = w.team;
  detail::team_thread_index = w.index;
  // The mutex as the thread owns it: the team may be gone before the thread first runs.
  std::unique_lock<std::mutex> lk(mutex, std::defer_lock);
  w.waker_core.attach();
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
        // model: S_IDLE_TO_IDLE.
        // An activation the team no longer needs (RunningNoMoreWork): stay Idle and hand the
        // thread on to the thread subscriber (Spec IdleToIdle).
        idle_parked_.push_back(&w);
        observe(TeamEvent::activate_thread, static_cast<int>(w.index));
        forward_threads(lk, 1);
      }
    } else {  // transitionThread
      --transitions_in_flight_;
      --n_waiting_;
      ++n_computing_;
      if (run_items(w, lk, TeamEvent::transition_thread)) return;
    }
  }
}

// An item taken from the queue, and what its run needs once the mutex is released.
struct ThreadTeam::Impl::TakenItem {
  std::shared_ptr<DataItem> item;
  ThreadTeam::Impl* subscriber = nullptr;  // the work subscriber the result goes to, if any
  bool skip = false;                       // the cycle has failed: the item is counted, not run
  bool timed = false;                      // transitionThread was passed on with this item in hand: time it
};

// Entered counted as Computing, with the mutex held. Applies the routine to queued items until
// there are none, then leaves the thread Waiting (RunningOpen) or Idle (RunningNoMoreWork).
// Returns true when the thread must end (the team is being destroyed).
bool ThreadTeam::Impl::run_items(Worker& w, std::unique_lock<std::mutex>& lk, TeamEvent event) {
  ActionContext::Outputs& outputs = w.outputs;  // kept by the thread: no allocation per wake-up
  const bool emits = routine_.emits();
  const ActionContext context(id_, name_, w.index, cycle_, *w.spaces, parameters_, emits ? &outputs : nullptr);
  const int thread = static_cast<int>(w.index);
  for (;;) {
    if (terminating_) return true;
    if (!queue_->empty()) {
      TakenItem taken = take_item(lk, event, thread);
      if (run_taken_item(w, context, taken, lk)) return true;
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
    // model: the end-of-cycle decision in run_locked. Threads in go_idle's forward still count in
    // n_computing_ but are done with the cycle: this thread is the last when it is the only other
    // (docs/thread-team-model.md, "What the model found").
    assert(mode_ == TeamMode::RunningNoMoreWork);
    if (n_computing_ - n_leaving_ == 1 && n_waiting_ == 0 && report_.processed > 0 && !end_of_cycle_ran_ &&
        !cycle_failed_ && routine_.has_end_of_cycle()) {
      if (run_end_of_cycle(context, outputs, lk)) return true;
      continue;
    }
    go_idle(w, lk, event);
    return terminating_;
  }
}

// With the mutex held: dequeues the next item, making the transitions that go with it, and
// releases the mutex (and wakes whom the transitions signalled) before the item runs.
ThreadTeam::Impl::TakenItem ThreadTeam::Impl::take_item(std::unique_lock<std::mutex>& lk, TeamEvent event, int thread) {
  TakenItem taken;
  taken.item = queue_->pop();
  WakeList wake;
  if (mode_ == TeamMode::RunningClosed && queue_->empty()) {
    // Spec Closed_Transition: dequeuing the last item ends RunningClosed in the same transition.
    mode_ = TeamMode::RunningNoMoreWork;
    wake_all_waiting(wake);  // Spec AwakenOnNoMoreWork
  } else if (!queue_->empty() && transitions_in_flight_ == 0 && !waiting_parked_.empty()) {
    // More work than this thread: pass transitionThread on. To a napping thread without a
    // notify, unless items are long enough to pay for its wake-up: this thread is about to run
    // one and take none of the napping thread's place meanwhile (docs/thread-team.md, "Nap on a
    // contended core").
    wake_one_waiting(wake, passed_on_item_time_ >= item_worth_a_wakeup);
    taken.timed = true;
  }
  taken.skip = cycle_failed_;
  taken.subscriber = taken.skip ? nullptr : work_subscriber_;
  if (taken.subscriber != nullptr) ++outbound_;
  observe(event, thread);
  receive_transitions_in_place(lk);
  lk.unlock();
  wake.notify();
  return taken;
}

// Without the mutex: runs the routine on a taken item and delivers what it made, then takes the
// mutex again and counts the item. Returns true when the routine destroyed this team (nothing of
// it may be touched then, see ~ThreadTeam).
bool ThreadTeam::Impl::run_taken_item(Worker& w, const ActionContext& context, TakenItem& taken,
                                      std::unique_lock<std::mutex>& lk) {
  ActionContext::Outputs& outputs = w.outputs;
  std::exception_ptr thrown;
  std::string failure;
  const auto started = taken.timed ? detail::PollClock::now() : detail::PollClock::time_point{};
  if (!taken.skip) {
    const detail::RoutineScope scope(this, taken.subscriber != nullptr);
    try {
      routine_(context, *taken.item);
    } catch (...) {
      if (!scope.team_destroyed()) {
        thrown = std::current_exception();
        failure =
            fmt::format("team '{}' (id {}), cycle {}: action routine '{}' threw on item {} (thread {}): {}", name_, id_,
                        context.cycle(), routine_.name(), describe_item(*taken.item), w.index, message_of(thrown));
      }
    }
    if (scope.team_destroyed()) return true;
  }
  // Spec CompMustEnqueue: the finished item (or what the routine emitted) goes to the work subscriber.
  Delivery delivery;
  if (thrown) {
    outputs.clear();
  } else if (routine_.emits()) {
    delivery = deliver(taken.subscriber, outputs);
    outputs.clear();
  } else if (taken.subscriber != nullptr) {
    deliver_one(taken.subscriber, taken.item, delivery);
  }
  taken.item.reset();

  const std::chrono::nanoseconds took = taken.timed ? detail::PollClock::now() - started : std::chrono::nanoseconds(0);
  lock_briefly_spinning(lk);
  if (taken.timed) passed_on_item_time_ = took;
  if (taken.subscriber != nullptr) release_outbound();
  if (taken.skip) {
    ++report_.skipped;
  } else if (thrown) {
    ++report_.failed;
    record_error(std::move(failure), thrown);
  } else {
    ++report_.processed;
    count_delivery(delivery);
  }
  return false;
}

// The last Computing thread of a cycle, after the last item (no other thread can compute again:
// the queue is closed and empty, activations in flight will find RunningNoMoreWork). Its outputs
// reach the subscriber before this team closes the subscriber's queue in finish_cycle. Only in a
// cycle whose routine ran: a thread that processed an item stays active until the close, so this
// is decided by the items, not by how thread activations and the close happen to interleave.
// Returns true when the step destroyed the team (nothing of it may be touched then).
bool ThreadTeam::Impl::run_end_of_cycle(const ActionContext& context, ActionContext::Outputs& outputs,
                                        std::unique_lock<std::mutex>& lk) {
  end_of_cycle_ran_ = true;
  ThreadTeam::Impl* const subscriber = work_subscriber_;
  if (subscriber != nullptr) ++outbound_;
  lk.unlock();
  std::exception_ptr thrown;
  {
    const detail::RoutineScope scope(this, subscriber != nullptr);
    try {
      routine_.end_of_cycle(context);
    } catch (...) {
      thrown = std::current_exception();
    }
    if (scope.team_destroyed()) return true;
  }
  Delivery delivery = deliver(subscriber, outputs);
  outputs.clear();
  lock_briefly_spinning(lk);
  if (subscriber != nullptr) release_outbound();
  count_delivery(delivery);
  if (thrown) {
    record_error(fmt::format("team '{}' (id {}), cycle {}: the end-of-cycle step of routine '{}' threw (thread {}): {}",
                             name_, id_, context.cycle(), routine_.name(), context.thread_index(), message_of(thrown)),
                 thrown);
  }
  return false;
}

// Unlocked: hands `outputs` to the subscriber in order. Outputs with no subscriber are an error
// for an emitting routine (they would be lost); a passed-on item with none is simply done.
ThreadTeam::Impl::Delivery ThreadTeam::Impl::deliver(ThreadTeam::Impl* subscriber, ActionContext::Outputs& outputs) {
  Delivery d;
  if (subscriber == nullptr) {
    if (routine_.emits() && !outputs.empty()) {
      d.undelivered = outputs.size();
      d.refused = fmt::format(
          "team '{}': routine '{}' emitted {} item(s) but the team has no work subscriber to "
          "take them: attach one",
          name_, routine_.name(), outputs.size());
    }
    return d;
  }
  for (auto& out : outputs) deliver_one(subscriber, out, d);
  return d;
}

// One output to the subscriber, tallied in `d` (also used directly for the item a routine that is
// not emitting hands on: the common case needs no vector).
void ThreadTeam::Impl::deliver_one(ThreadTeam::Impl* subscriber, std::shared_ptr<DataItem>& item, Delivery& d) {
  std::string refused = subscriber->receive_item(item, *this);
  if (refused.empty()) {
    ++d.forwarded;
  } else {
    ++d.undelivered;
    if (d.refused.empty()) d.refused = std::move(refused);
  }
}

void ThreadTeam::Impl::count_delivery(Delivery& delivery) {
  report_.forwarded += delivery.forwarded;
  report_.undelivered += delivery.undelivered;
  if (!delivery.refused.empty()) record_error(std::move(delivery.refused), nullptr);
}

// A Computing thread found no more work in RunningNoMoreWork and becomes Idle.
// model: S_GO_IDLE, then go_idle_locked.
void ThreadTeam::Impl::go_idle(Worker& w, std::unique_lock<std::mutex>& lk, TeamEvent event) {
  // Spec ForwardThreads, while still counted as Computing, so that the last thread to become
  // Idle is the last to have delivered its outputs.
  ++n_leaving_;
  forward_threads(lk, 1);
  --n_leaving_;
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
