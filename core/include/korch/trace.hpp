// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Trace of one or more execution cycles: every task (a team applying its routine to an item),
// transfer and helper step, with team, thread, item and begin/end times; exported as Chrome trace
// JSON (chrome://tracing, Perfetto). Recording costs one clock read at each end and one short
// critical section per event; nothing is recorded while no Trace is attached to the Runtime.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace korch {

struct TraceEvent {
  std::string name;      // routine or step ("A", "pack", "host_to_device", ...)
  std::string category;  // "task", "transfer", "helper", "distributor"
  std::string team;      // team or helper name
  unsigned thread = 0;   // thread index within the team
  std::string item;      // DataItem::describe()
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  int process = 0;          // the rank that recorded it: one process row per rank in the Chrome trace
  std::uint64_t bytes = 0;  // what a transfer moved; a counter's value (is_bytes_counter)
};

// A counter sample rather than a span of work: `bytes` moved of kind `name` ("state", "halo",
// "output") in the step that ended at begin_ns. The Chrome trace shows it as a counter track
// "bytes moved: <name>"; timelines and overlap figures leave it out.
inline constexpr const char* kBytesCategory = "bytes";
inline bool is_bytes_counter(const TraceEvent& e) { return e.category == kBytesCategory; }
TraceEvent bytes_counter(const std::string& kind, std::uint64_t bytes, std::int64_t at_ns, int process = 0);

class Trace {
 public:
  Trace() : origin_(std::chrono::steady_clock::now()) {}
  // Nanoseconds since the trace was created.
  std::int64_t now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_).count();
  }
  // The trace's origin on the steady clock, in nanoseconds: ranks on one node share that clock, so
  // the difference of two ranks' origins aligns their events.
  std::int64_t origin_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(origin_.time_since_epoch()).count();
  }
  void record(TraceEvent event);
  std::vector<TraceEvent> events() const;
  std::size_t size() const;
  void clear();
  // {"traceEvents": [...]} with one "X" event per TraceEvent (pid = process + 1 with process_name
  // metadata "rank N", one tid per team thread, thread_name metadata "team/thread"), times in
  // microseconds.
  std::string to_chrome_json() const;
  // Writes to_chrome_json() to `path` atomically (write_chrome_trace); throws korch::Error naming
  // the path when the file cannot be written.
  void write_chrome_json(const std::string& path) const;

 private:
  std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mutex_;
  std::vector<TraceEvent> events_;
};

// How much of the transfers' time computation hid (transfers are meant to overlap computation): the
// summed length of the "transfer" events, and how much of it fell while at least one "task" event
// ran on some thread.
struct TransferOverlap {
  std::int64_t transfer_ns = 0;
  std::int64_t overlapped_ns = 0;
  std::size_t transfers = 0;
  double fraction() const noexcept {
    return transfer_ns > 0 ? static_cast<double>(overlapped_ns) / static_cast<double>(transfer_ns) : 0.0;
  }
};
TransferOverlap transfer_overlap(const std::vector<TraceEvent>& events);
// The same for the events of another category (e.g. "communication"), optionally only those named
// `name`; tasks count only when recorded by the same process (rank) as the event.
TransferOverlap overlap_with_tasks(const std::vector<TraceEvent>& events, const std::string& category,
                                   const std::string& name = "");

// The Chrome trace of `events`, as Trace::to_chrome_json writes it.
std::string chrome_json(const std::vector<TraceEvent>& events);
// Writes chrome_json(events) to `path` under a temporary name, then renames it (output_files.hpp),
// so a failed or killed write leaves `path` as it was; throws korch::Error naming the path.
// A trace merged over ranks: merged_trace.hpp.
void write_chrome_trace(const std::vector<TraceEvent>& events, const std::string& path);

// Events as compact JSON text and back: what ranks send to the one that writes the trace.
std::string events_to_json(const std::vector<TraceEvent>& events);
// Throws korch::Error naming the field when `text` is not what events_to_json writes.
std::vector<TraceEvent> events_from_json(const std::string& text);

// Records one event from construction to destruction (no-op with a null trace).
class TraceScope {
 public:
  TraceScope(Trace* trace, const char* name, const char* category, const std::string& team, unsigned thread,
             const std::string& item)
      : trace_(trace) {
    if (trace_) {
      event_.name = name;
      event_.category = category;
      event_.team = team;
      event_.thread = thread;
      event_.item = item;
      event_.begin_ns = trace_->now();
    }
  }
  // What the scope's work moved, shown with the event.
  void set_bytes(std::uint64_t bytes) noexcept { event_.bytes = bytes; }
  ~TraceScope() {
    if (trace_) {
      event_.end_ns = trace_->now();
      trace_->record(std::move(event_));
    }
  }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  Trace* trace_;
  TraceEvent event_;
};

}  // namespace korch
