// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Keeping a team thread off the core of the thread that wakes it (docs/thread-team.md, "Waiting").
//
// When every core is busy, the scheduler places a woken thread on the core it last ran on or on
// its waker's core. A team thread that went to sleep on the core of a caller outside the team is
// woken there again at the caller's next enqueue: it preempts the caller, which then can neither
// send the next event nor take the item itself in wait(), and each item costs two context switches
// on one core while the other cores run other programs. Such a thread moves itself to another core
// it may run on, before it polls or sleeps: its next wake-up then takes place there, and takes its
// share of that core from whatever else runs on it. The kernel chooses the core among those the
// thread may run on (a rank bound to a socket stays on it); a thread that may run on one core only
// stays. At most one move per millisecond: where the process's own threads outnumber the cores,
// every core holds one of them, and moving more often would only shuffle them.
#pragma once

#include <chrono>

#if defined(__linux__)
#include <sched.h>
#endif

namespace korch::detail {

class WakerCore {
 public:
  // On the thread itself: the cores it may run on (as given when it started; left as they are).
  void attach() noexcept {
#if defined(__linux__)
    CPU_ZERO(&allowed_);
    usable_ = sched_getaffinity(0, sizeof allowed_, &allowed_) == 0 && CPU_COUNT(&allowed_) > 1;
#endif
  }

  // On the thread itself, running on `cpu`, the core of its last waker: moves to another core it may
  // run on and returns true, or returns false where it may run on no other core.
  bool move_off(int cpu) noexcept {
#if defined(__linux__)
    if (!usable_ || cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed_)) return false;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_move_ < min_move_interval) return false;
    last_move_ = now;
    cpu_set_t others = allowed_;
    CPU_CLR(cpu, &others);
    if (sched_setaffinity(0, sizeof others, &others) != 0) {
      usable_ = false;  // not permitted here: leave the thread where the scheduler puts it
      return false;
    }
    // The thread now runs on another core; giving back the full set does not move it again.
    if (sched_setaffinity(0, sizeof allowed_, &allowed_) != 0) usable_ = false;
    return true;
#else
    (void)cpu;
    return false;
#endif
  }

 private:
  static constexpr std::chrono::milliseconds min_move_interval{1};
#if defined(__linux__)
  cpu_set_t allowed_{};
  std::chrono::steady_clock::time_point last_move_{};
#endif
  bool usable_ = false;
};

}  // namespace korch::detail
