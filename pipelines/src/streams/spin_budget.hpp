// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How long an idle scheduler thread may poll before it sleeps: a budget adapted from the thread's
// recent waits, never above ParallelOptions::idle_spin (see docs/streams.md, "Waiting for work").
#pragma once

#include <algorithm>
#include <chrono>

namespace korch::streams::detail {

class SpinBudget {
 public:
  using Clock = std::chrono::steady_clock;
  using Duration = Clock::duration;

  // A poll loop reads the clock between sweeps; a gap this long means the thread was descheduled,
  // i.e. something else wanted its core. Sweeps of blocked tasks take well under a microsecond,
  // and a time slice a preempting thread gets is far longer than this.
  static constexpr Duration preemption_gap = std::chrono::microseconds(50);

  // `cap`: ParallelOptions::idle_spin (callers handle microseconds::max(), never sleeping, apart).
  explicit SpinBudget(std::chrono::microseconds cap)
      : cap_(std::min<std::chrono::microseconds>(cap, std::chrono::hours(24))), limit_(cap_) {}

  // How long the idle period that began at `since` may poll at `now`.
  bool allows(Clock::time_point since, Clock::time_point now) const {
    return now >= calm_until_ && now - since < limit_;
  }

  // The idle period ended with work found while polling: polling paid off, and preemption has
  // stopped troubling it, so the pause after a preempted poll starts small again.
  void caught() { calm_ = min_calm; }

  // The idle period ended with work found only after sleeping, `waited` after it began. A wait
  // within the cap would have been caught by a longer poll: poll twice that long next time. A
  // longer wait could not have been: halve the budget, down to nothing.
  void missed(Duration waited) {
    if (waited <= cap_) {
      limit_ = std::min<Duration>(cap_, std::max<Duration>(limit_, 2 * waited));
    } else {
      shrink();
    }
  }

  // The thread was descheduled while polling: the cores are oversubscribed, and the thread it
  // waits for may be the one queued for its core. No polling for a while (doubling while it keeps
  // happening), and a smaller budget afterwards.
  void preempted(Clock::time_point now) {
    shrink();
    calm_until_ = now + calm_;
    calm_ = std::min<Duration>(2 * calm_, max_calm);
  }

 private:
  static constexpr Duration min_calm = std::chrono::milliseconds(1);
  static constexpr Duration max_calm = std::chrono::milliseconds(128);
  // Below this a poll is a sweep or two; it is not worth the bookkeeping.
  static constexpr Duration floor = std::chrono::microseconds(2);

  void shrink() {
    limit_ /= 2;
    if (limit_ < floor) limit_ = Duration::zero();
  }

  Duration cap_;
  Duration limit_;
  Duration calm_ = min_calm;
  Clock::time_point calm_until_{};
};

}  // namespace korch::streams::detail
