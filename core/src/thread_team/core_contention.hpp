// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Whether a team thread's core is shared with other runnable threads (docs/thread-team.md,
// "Waiting", "Leave the event to the caller").
//
// The thread itself collects the evidence, at no cost beyond a clock read on paths that already
// pay for a wake-up or a poll: a poll of its own that was descheduled, or a wake-up that waited long
// for a core after the notify. Either makes the core count as contended for a while; without new
// evidence it counts as free again.
#pragma once

#include "polling.hpp"

#include <chrono>

namespace korch::detail {

class CoreContention {
 public:
  void note_descheduled_poll(PollClock::time_point now) noexcept { contended_until_ = now + memory; }

  // A thread woken on a free core runs within tens of microseconds even on a virtual machine whose
  // core had gone idle; one that waited longer found its core busy with another thread.
  void note_wakeup(PollClock::time_point notified, PollClock::time_point running) noexcept {
    if (running - notified > slow_wakeup) contended_until_ = running + memory;
  }

  bool contended(PollClock::time_point now) const noexcept { return now < contended_until_; }

 private:
  static constexpr std::chrono::microseconds slow_wakeup{200};
  // Several scheduler time slices: evidence comes only when the thread polls or is woken, and a
  // loaded core stays loaded for a while.
  static constexpr std::chrono::milliseconds memory{50};
  PollClock::time_point contended_until_{};
};

}  // namespace korch::detail
