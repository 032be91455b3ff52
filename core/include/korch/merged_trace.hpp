// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One trace of a run on several ranks: every rank's events on rank 0's clock, each with its rank
// as TraceEvent::process, written by rank 0 as one Chrome trace (one process row per rank) or
// drawn as one timeline (timeline.hpp, one row per rank's team thread).
//
// Clocks: each rank's Trace counts from its own origin on the steady clock; the events of rank r
// are shifted by origin(r) - origin(0). Ranks on one node share the steady clock, so their events
// line up; across nodes the alignment is only as good as the nodes' clocks agree.
#pragma once

#include <korch/communicator.hpp>
#include <korch/trace.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace korch {

// Every rank's `events` (recorded by a Trace whose origin_ns() is `origin_ns`), in rank order, on
// rank 0's clock, with TraceEvent::process set to the rank; on every rank. On one process, the
// events unchanged. Collective: every rank of `comm` calls it.
std::vector<TraceEvent> merge_over_ranks(const std::vector<TraceEvent>& events, std::int64_t origin_ns,
                                         const Communicator& comm);
// The same for every event of `trace`.
std::vector<TraceEvent> merge_over_ranks(const Trace& trace, const Communicator& comm);

// Merges over the ranks and writes one Chrome trace to `path` on rank 0 (atomically,
// write_chrome_trace); on one process, the trace itself. Collective; only rank 0 touches the file
// and only rank 0 throws when it cannot be written (korch::Error naming the path).
void write_merged_chrome_trace(const std::vector<TraceEvent>& events, std::int64_t origin_ns, const Communicator& comm,
                               const std::string& path);
void write_merged_chrome_trace(const Trace& trace, const Communicator& comm, const std::string& path);

}  // namespace korch
