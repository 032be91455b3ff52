// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/recent_cycles.hpp>

#include <fmt/format.h>

#include <utility>

namespace korch {

RecentCycles::RecentCycles(int capacity) : capacity_(capacity) {
  if (capacity < 1)
    throw Error(fmt::format("RecentCycles: capacity {} keeps no cycle; give the number of cycles to keep (at least 1)",
                            capacity));
}

void RecentCycles::keep(std::vector<TraceEvent> cycle_events) {
  cycles_.push_back(std::move(cycle_events));
  while (static_cast<int>(cycles_.size()) > capacity_) cycles_.pop_front();
  ++seen_;
}

void RecentCycles::add_to_newest(TraceEvent event) {
  if (cycles_.empty())
    throw Error::format("RecentCycles: no cycle is kept to add the event '{}' ({}) to: keep a cycle first", event.name,
                        event.category);
  cycles_.back().push_back(std::move(event));
}

void RecentCycles::take(Trace& trace) {
  keep(trace.events());
  trace.clear();
}

std::vector<TraceEvent> RecentCycles::events() const {
  std::size_t total = 0;
  for (const auto& cycle : cycles_) total += cycle.size();
  std::vector<TraceEvent> all;
  all.reserve(total);
  for (const auto& cycle : cycles_) all.insert(all.end(), cycle.begin(), cycle.end());
  return all;
}

const std::vector<TraceEvent>& RecentCycles::newest() const {
  static const std::vector<TraceEvent> none;
  return cycles_.empty() ? none : cycles_.back();
}

void RecentCycles::clear() {
  cycles_.clear();
  seen_ = 0;
}

}  // namespace korch
