// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The trace of the last few cycles of a long run. Tracing every cycle of a run of thousands keeps
// millions of events; a picture or a Chrome trace of the run's end wants only the last few.
// RecentCycles keeps the events of the newest `capacity` cycles, each handed over as one cycle's
// events (keep) or taken from a Trace that recorded one cycle (take, which clears the Trace so the
// next cycle starts empty). events() gives them oldest first, ready for write_timeline_png,
// write_chrome_trace or merge_over_ranks (docs/ARCHITECTURE.md, "Traces").
#pragma once

#include <korch/trace.hpp>

#include <cstdint>
#include <deque>
#include <vector>

namespace korch {

class RecentCycles {
 public:
  // Keeps the last `capacity` cycles; throws korch::Error unless capacity >= 1.
  explicit RecentCycles(int capacity);

  // One cycle's events; the oldest kept cycle is dropped when `capacity` are kept already.
  void keep(std::vector<TraceEvent> cycle_events);
  // The events `trace` recorded (one cycle's), kept as by keep(); the trace is cleared.
  void take(Trace& trace);

  // Adds an event to the newest kept cycle: what is known only once the cycle's trace was kept
  // (bytes_counter samples of the step). Throws korch::Error when no cycle is kept.
  void add_to_newest(TraceEvent event);

  // The kept cycles' events, oldest cycle first, each cycle's in recording order.
  std::vector<TraceEvent> events() const;
  // The events of the newest kept cycle (empty when none is kept).
  const std::vector<TraceEvent>& newest() const;

  int capacity() const { return capacity_; }
  // Cycles kept now (at most capacity()).
  int kept() const { return static_cast<int>(cycles_.size()); }
  // Cycles handed over since construction or clear(): the kept ones are the last kept() of them,
  // numbered seen() - kept() + 1 ... seen() counting from 1.
  std::int64_t seen() const { return seen_; }
  void clear();

 private:
  int capacity_;
  std::int64_t seen_ = 0;
  std::deque<std::vector<TraceEvent>> cycles_;
};

}  // namespace korch
