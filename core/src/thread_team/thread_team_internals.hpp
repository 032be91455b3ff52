// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the files of ThreadTeam share and no user sees: polling with a process-wide budget, the
// brief spinning lock, and the private types of the team (its worker threads, the item ring, the
// wait slot, the list of threads to wake). The implementation notes are in thread_team.cpp.
#pragma once

#include <korch/thread_team.hpp>

#include "thread_team_impl.hpp"

#include <korch/backend/thread_spaces.hpp>
#include <korch/cpu_relax.hpp>

#include "core_contention.hpp"
#include "polling.hpp"
#include "waker_core.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace korch {

namespace detail {

// The team whose routine this thread is running: its own threads, and a caller in wait() while it
// runs items of the cycle (thread_team_waiter.cpp).
inline thread_local const ThreadTeam* team_of_this_thread = nullptr;
inline thread_local unsigned team_thread_index = 0;  // the team thread whose place it runs in

// A team's routine running on this thread (innermost first). A routine that destroys its own team
// is found here by the destructor, which marks the frame and keeps the routine alive until it
// returns; the code below the routine then leaves without touching the team again (docs/thread-team.md,
// "Failures").
struct RoutineFrame {
  const void* team;     // the team's state (ThreadTeam::Impl), as an identity only
  bool holds_outbound;  // the thread counts in the team's outbound_ while the routine runs
  bool team_destroyed;
  ActionRoutine keep_alive;
  RoutineFrame* outer;
};
inline thread_local RoutineFrame* routine_frame = nullptr;

class RoutineScope {
 public:
  RoutineScope(const void* team, bool holds_outbound)
      : frame_{team, holds_outbound, false, ActionRoutine{}, routine_frame} {
    routine_frame = &frame_;
  }
  ~RoutineScope() { routine_frame = frame_.outer; }
  RoutineScope(const RoutineScope&) = delete;
  RoutineScope& operator=(const RoutineScope&) = delete;
  bool team_destroyed() const noexcept { return frame_.team_destroyed; }

 private:
  RoutineFrame frame_;
};

// The innermost frame of `team`'s routine on this thread, or nullptr.
inline RoutineFrame* routine_frame_of(const void* team) noexcept {
  for (RoutineFrame* f = routine_frame; f != nullptr; f = f->outer) {
    if (f->team == team) return f;
  }
  return nullptr;
}

// Critical sections are a few dozen instructions: a contended lock is usually free again within
// a few hundred nanoseconds, so try for a few microseconds before sleeping in the kernel. Sleeping
// on a contended mutex costs a futex wake-up, and on a virtual machine whose other core has gone idle
// that wake-up takes tens of microseconds (docs/thread-team.md, "Waiting"). A holder that does not
// release within the limit was descheduled; then sleeping is right.
inline constexpr std::chrono::microseconds lock_spin_limit{5};

// Items that took less than this each, counted from start_cycle to the cycle's end (the caller's
// enqueues included), are tiny: a hand-off between cores (the queue's and the mutex's cache lines,
// ~0.2 us per item) costs more than they do, so the caller in wait() is left to run the next cycle's
// items alone (docs/thread-team.md, "Tiny items"). One cycle in this many is timed (the first, the
// ninth, ...): two clock reads would add a sixth to an empty cycle, and a team's items change
// their size slowly if at all.
inline constexpr std::chrono::nanoseconds tiny_item_time{1000};
inline constexpr std::uint64_t tiny_items_timed_every = 8;

inline void lock_briefly_spinning(std::unique_lock<std::mutex>& lk) {
  for (int i = 0; i < 32; ++i) {
    if (lk.try_lock()) return;
    cpu_relax();
  }
  const auto deadline = PollClock::now() + lock_spin_limit;
  for (unsigned i = 1;; ++i) {
    if (lk.try_lock()) return;
    cpu_relax();
    if ((i & 15U) == 0 && PollClock::now() >= deadline) break;
  }
  lk.lock();
}

// The team mutex, taken as lock_briefly_spinning takes it.
inline std::unique_lock<std::mutex> lock_spinning(std::mutex& m) {
  std::unique_lock<std::mutex> lk(m, std::defer_lock);
  lock_briefly_spinning(lk);
  return lk;
}

inline std::string describe_item(const DataItem& item) {
  try {
    return item.describe();
  } catch (...) {
    return "<an item whose describe() threw>";
  }
}

inline std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

}  // namespace detail

struct ThreadTeam::Impl::Worker : std::enable_shared_from_this<ThreadTeam::Impl::Worker> {
  enum Signal : int { none = 0, activate = 1, transition = 2, terminate = 3 };

  Worker(unsigned i, std::chrono::nanoseconds spin, const ThreadTeam* owner)
      : index(i), team(owner), spin_budget(spin) {}

  const unsigned index;
  // The team's API object, for ThreadTeam::current(): the thread reads it here, since the team may
  // be gone before the thread first runs (see ~ThreadTeam).
  const ThreadTeam* const team;
  std::chrono::nanoseconds spin_budget;  // how long park() polls (owned by the thread)
  ActionContext::Outputs outputs;        // what an emitting routine emitted (used by whoever runs as this thread)
  // Written only under the team mutex; read under it, or polled (acquire) by the owning thread.
  std::atomic<int> signal{none};
  bool sleeping = false;  // in cv.wait (guarded by the team mutex)
  // In park() or not started yet: from its next look at its signal on, the thread touches nothing of
  // the team but the mutex and this record once it is terminated, so ~ThreadTeam need not wait for it
  // (team mutex).
  bool parked = true;
  bool waking = false;  // notified, not yet running (counted in detail::waking_threads; team mutex)
  // Sleeps for at most TeamOptions::contended_nap: events reach it without a notify (team mutex).
  bool napping = false;
  unsigned naps_in_vain = 0;            // naps in a row that ended with no event and no new cycle (owned by the thread)
  bool leaving_event = false;           // leaves its event to the caller for a moment (team mutex; see park)
  bool caller_took_left_event = false;  // the last event it left was taken (owned by the thread)
  bool event_left_unlocked = false;     // the event in hand was left before the mutex (owned by the thread)
  // The team's last cycle had tiny items (detail::tiny_item_time): written at each cycle's end under
  // the team mutex, read by the thread also while it polls unlocked.
  std::atomic<bool> tiny_items{false};
  int waker_cpu = -1;                           // the core of the thread that last woke it (team mutex; see park)
  detail::PollClock::time_point notified_at{};  // when it was last notified (team mutex)
  detail::CoreContention contention;            // owned by the thread (see park)
  detail::WakerCore waker_core;                 // owned by the thread (see park)
  std::shared_ptr<const std::atomic<std::size_t>> queued;  // the queue's size hint (ItemRing::size_hint)
  std::condition_variable cv;
  // Released by the team's destructor when the thread is not waited for (the thread may end after
  // Kokkos is finalized; it no longer runs items then).
  std::optional<ThreadSpaces> spaces{std::in_place};
  std::thread thread;
};

// The pending-work queue: a power-of-two ring of shared_ptrs that only ever grows, so that the
// steady state enqueues and dequeues without allocating.
class ThreadTeam::Impl::ItemRing {
 public:
  ItemRing() : slots_(64) {}

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  // The number of queued items, readable without the mutex (a hint, see park). Owned jointly with
  // the team's threads, which may read it after the team is gone (see ~ThreadTeam).
  std::shared_ptr<const std::atomic<std::size_t>> size_hint() const { return size_hint_; }

  void push(std::shared_ptr<DataItem>&& item) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(item);
    ++size_;
    size_hint_->store(size_, std::memory_order_relaxed);
  }

  std::shared_ptr<DataItem> pop() noexcept {
    std::shared_ptr<DataItem> item = std::move(slots_[head_]);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    size_hint_->store(size_, std::memory_order_relaxed);
    return item;
  }

  void clear() noexcept {
    while (!empty()) pop();
  }

 private:
  void grow() {
    std::vector<std::shared_ptr<DataItem>> bigger(slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<std::shared_ptr<DataItem>> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
  std::shared_ptr<std::atomic<std::size_t>> size_hint_ = std::make_shared<std::atomic<std::size_t>>(0);
};

// The one caller blocked in wait(): the Idle transition hands it the cycle's result.
struct ThreadTeam::Impl::WaitSlot {
  bool done = false;
  bool team_destroyed_by_caller = false;  // the waiter itself destroyed the team (from a routine it ran)
  std::exception_ptr error;
  std::atomic<bool> done_hint{false};  // polled while spinning
};

// Threads to notify once the mutex is released (only those that are asleep).
struct ThreadTeam::Impl::WakeList {
  static void polling_threads_waking_add() noexcept { detail::waking_threads.fetch_add(1, std::memory_order_relaxed); }
  std::array<Worker*, 8> few{};
  std::vector<Worker*> more;
  std::size_t n = 0;

  // Under the team mutex: w is asleep and gets its event; counted as waking until it runs. A thread
  // that was notified and has not run yet is not notified again: it will look at its signal once it
  // has the mutex, and a second notification would be a system call for nothing. Nor is a napping
  // thread (see ThreadTeam::may_nap).
  // `even_napping`: the cycle cannot end before w has received its event.
  void add(Worker* w, bool even_napping = false) {
    if (w->napping && !even_napping) {  // no notify now: see notify_unnotified
      remember_unnotified(*w);
      return;
    }
    w->waker_cpu = detail::current_cpu();
    if (w->waking) return;
    w->waking = true;
    w->notified_at = detail::PollClock::now();
    polling_threads_waking_add();
    if (n < few.size()) {
      few[n++] = w;
    } else {
      more.push_back(w);
    }
  }
  void notify() {
    for (std::size_t i = 0; i < n; ++i) few[i]->cv.notify_one();
    for (Worker* w : more) w->cv.notify_one();
  }

  // Napping threads this thread sent an event without a notify (docs/thread-team.md, "Nap on a
  // contended core"). The sender notifies those whose events are still there with items queued once
  // it has done what it can in a wait(), and when a team thread goes to sleep: a caller that waits
  // for another team first does not leave these items to the end of a nap. Per sending thread.
  static std::vector<std::shared_ptr<Worker>>& unnotified() {
    thread_local std::vector<std::shared_ptr<Worker>> workers;
    return workers;
  }
  static void notify_unnotified() {
    std::vector<std::shared_ptr<Worker>>& workers = unnotified();
    for (const auto& w : workers) {
      const int signal = w->signal.load(std::memory_order_acquire);
      const bool queued = w->queued->load(std::memory_order_relaxed) > 0;
      if ((signal == Worker::activate || signal == Worker::transition) && queued) w->cv.notify_one();
    }
    workers.clear();
  }
  static void remember_unnotified(Worker& w) {
    std::vector<std::shared_ptr<Worker>>& workers = unnotified();
    for (const auto& known : workers) {
      if (known.get() == &w) return;
    }
    if (workers.size() >= max_unnotified) notify_unnotified();  // a sender that never blocks in a team
    workers.push_back(w.shared_from_this());
  }
  static constexpr std::size_t max_unnotified = 64;
};

}  // namespace korch
