// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Whether a run's threads get the cores they would use: when they get clearly less CPU time than
// they spent awake (and than the cores they sit on can give), other threads (of other programs, or
// of this one) want those cores too, so an idle thread that polled or yielded would take a core
// from a thread that needs it, or stand behind that thread for a time slice, instead of sleeping
// until it is woken.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>

namespace korch::streams::detail {

class CoreShare {
 public:
  using Clock = std::chrono::steady_clock;

  // What the run's threads have had so far, read by `usage()`: CPU time and time awake (summed over
  // the threads, in nanoseconds; cpu < 0: unknown), and the cores their awake threads sit on now.
  struct Usage {
    long long cpu_ns = -1;
    long long awake_ns = 0;
    unsigned cores = 0;
  };

  // Measured over windows of at least `window`, by whichever caller finds the last one over;
  // between measurements the last verdict holds.
  template <class UsageFn>
  bool starved(Clock::time_point now, UsageFn&& usage) {
    const Clock::rep stamp = now.time_since_epoch().count();
    const Clock::rep start = window_start_.load(std::memory_order_acquire);
    if ((start != 0 && stamp - start < window.count()) || measuring_.exchange(true, std::memory_order_acquire)) {
      return starved_.load(std::memory_order_relaxed);
    }
    const Usage u = usage();
    if (start != 0 && u.cpu_ns >= 0 && last_.cpu_ns >= 0) {
      // The CPU the threads could have had: their awake time, but no more than the cores they sat
      // on at both ends of the window give.
      const long long wall = static_cast<long long>(std::chrono::nanoseconds(Clock::duration(stamp - start)).count());
      const long long could = std::min(u.awake_ns - last_.awake_ns, wall * std::min(u.cores, last_.cores));
      if (could > 0) starved_.store(4 * (u.cpu_ns - last_.cpu_ns) < 3 * could, std::memory_order_relaxed);
    }
    last_ = u;
    window_start_.store(stamp, std::memory_order_release);
    measuring_.store(false, std::memory_order_release);
    return starved_.load(std::memory_order_relaxed);
  }

  static constexpr Clock::duration window = std::chrono::milliseconds(2);

 private:
  std::atomic<Clock::rep> window_start_{0};  // steady clock ticks; 0: no window yet
  std::atomic<bool> starved_{false};
  std::atomic<bool> measuring_{false};
  Usage last_;  // written by the measuring caller only (measuring_ orders the callers)
};

}  // namespace korch::streams::detail
