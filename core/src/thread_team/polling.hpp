// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How team threads and callers in wait() poll before they sleep (docs/thread-team.md, "Waiting").
//
// Polling saves two context switches when the event comes within microseconds, and costs a core
// while it lasts. These rules keep it from hurting when cores are oversubscribed:
//  * at most one poller per hardware thread in the process (PollingSlot); the others sleep at once;
//  * a poller never calls sched_yield: on a loaded machine a yield hands the core to a CPU-bound
//    thread for its whole time slice (milliseconds), far longer than the event takes to arrive;
//  * a poller that finds it was descheduled between two polls stops and sleeps, since the thread
//    it waits for needs that core more than it does, and its next waits poll less;
//  * a poller stops and sleeps while a team thread that was woken has not run yet: it may be
//    waiting for this very core;
//  * a team thread that runs on the core of the thread that last woke it does not poll: that
//    thread was preempted by the wake-up or will be, and it is the one that sends the next event
//    (it first tries to move to another core, waker_core.hpp);
//  * a team thread whose own polls or wake-ups show its core contended leaves its event for one
//    poll window to the caller that feeds the team (core_contention.hpp), and naps instead of
//    sleeping until woken: events reach it without a notify (ThreadTeam::may_nap).
#pragma once

#include <korch/cpu_relax.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

namespace korch::detail {

using PollClock = std::chrono::steady_clock;

// A gap this long between two polls means the poller was descheduled: it is not alone on its core.
inline constexpr std::chrono::microseconds descheduled_gap{30};

// The core this thread runs on, or -1 where the system does not say.
inline int current_cpu() noexcept {
#if defined(__linux__)
  return sched_getcpu();
#else
  return -1;
#endif
}

// Threads of all teams (and callers in wait()) that are polling right now, and team threads that
// were woken and have not run yet. Process-wide by nature: the cores are shared by every team.
inline std::atomic<int> polling_threads{0};
inline std::atomic<int> waking_threads{0};
inline const int max_polling_threads = [] {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}();

class PollingSlot {
 public:
  // Takes a slot if one is free, or frees up within `grace`. The grace matters at the end of a
  // cycle: the last team thread releases the caller blocked in wait(), and finds the slots full
  // only because that caller has not yet left its poll; without the grace it would go to sleep and
  // cost a wake-up at the start of the next cycle.
  explicit PollingSlot(std::chrono::nanoseconds grace) : held_(try_take()) {
    if (held_ || grace.count() <= 0) return;
    const auto deadline = PollClock::now() + grace;
    for (unsigned i = 1; !held_; ++i) {
      cpu_relax();
      if ((i & 63U) == 0 && PollClock::now() >= deadline) return;
      if (polling_threads.load(std::memory_order_relaxed) < max_polling_threads) held_ = try_take();
    }
  }
  ~PollingSlot() {
    if (held_) polling_threads.fetch_sub(1, std::memory_order_relaxed);
  }
  PollingSlot(const PollingSlot&) = delete;
  PollingSlot& operator=(const PollingSlot&) = delete;
  explicit operator bool() const noexcept { return held_; }

 private:
  static bool try_take() noexcept {
    if (polling_threads.fetch_add(1, std::memory_order_relaxed) < max_polling_threads) return true;
    polling_threads.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  bool held_;
};

enum class PollResult { ready, timed_out, descheduled, no_slot };

// Polls `ready` for at most `budget` (if a polling slot is free). The clock is first read after a
// few polls, so an event that is already there costs no clock read; when the poll ends without the
// event, *ended is the time it ended.
template <class Ready>
PollResult poll_until(std::chrono::nanoseconds budget, Ready&& ready, PollClock::time_point* ended) {
  for (int i = 0; i < 16; ++i) {
    if (ready()) return PollResult::ready;
    if (budget.count() <= 0) break;
    cpu_relax();
  }
  *ended = PollClock::now();
  if (budget.count() <= 0) return PollResult::no_slot;
  const PollingSlot slot(std::min<std::chrono::nanoseconds>(budget, std::chrono::microseconds(10)));
  if (!slot) return ready() ? PollResult::ready : PollResult::no_slot;
  auto last = PollClock::now();
  const auto deadline = last + budget;
  for (unsigned i = 1;; ++i) {
    if (ready()) return PollResult::ready;
    cpu_relax();
    if ((i & 15U) != 0) continue;
    const auto now = PollClock::now();
    *ended = now;
    if (now - last > descheduled_gap) return ready() ? PollResult::ready : PollResult::descheduled;
    // A team thread was woken and waits for a core: this one may be the core it needs (the
    // process's own threads outnumber the cores). Sleeping gives it way without a yield.
    if (waking_threads.load(std::memory_order_relaxed) > 0) return ready() ? PollResult::ready : PollResult::no_slot;
    if (now >= deadline) return ready() ? PollResult::ready : PollResult::timed_out;
    last = now;
  }
}

// The polling budget of one waiter (a team thread, or a team's callers in wait()), adapted from
// its recent waits: it grows back towards the configured limit while events come within that
// limit, halves each time the poller was descheduled, and shrinks while waits are long (nothing to
// gain). Returns the budget for the next wait, given how this one's poll ended and how long the
// waiter slept after it.
inline std::chrono::nanoseconds next_spin_budget(std::chrono::nanoseconds budget, std::chrono::nanoseconds limit,
                                                 PollResult poll, std::chrono::nanoseconds slept) noexcept {
  if (poll == PollResult::descheduled) return budget / 2;
  if (poll == PollResult::ready || budget + slept <= limit) return std::min(limit, budget + limit / 4);
  if (poll == PollResult::no_slot) return budget;
  return budget - budget / 4;
}

}  // namespace korch::detail
