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
};

class Trace {
 public:
  Trace() : origin_(std::chrono::steady_clock::now()) {}
  // Nanoseconds since the trace was created.
  std::int64_t now() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - origin_).count();
  }
  void record(TraceEvent event);
  std::vector<TraceEvent> events() const;
  std::size_t size() const;
  void clear();
  // {"traceEvents": [...]} with one "X" event per TraceEvent (pid 1, one tid per team thread,
  // thread_name metadata "team/thread"), times in microseconds.
  std::string to_chrome_json() const;
  // Writes to_chrome_json() to `path`; throws korch::Error when the file cannot be written.
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
