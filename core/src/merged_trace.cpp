// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/merged_trace.hpp>

#include <utility>

namespace korch {

std::vector<TraceEvent> merge_over_ranks(const std::vector<TraceEvent>& events, std::int64_t origin_ns,
                                         const Communicator& comm) {
  if (comm.size() == 1) return events;
  const auto texts = comm.all_gather(events_to_json(events));
  const auto origins = comm.all_gather(std::vector<std::uint64_t>{static_cast<std::uint64_t>(origin_ns)});
  std::vector<TraceEvent> all;
  for (int r = 0; r < comm.size(); ++r) {
    const auto R = static_cast<std::size_t>(r);
    const std::int64_t shift = static_cast<std::int64_t>(origins[R]) - static_cast<std::int64_t>(origins[0]);
    for (auto e : events_from_json(texts[R])) {
      e.process = r;
      e.begin_ns += shift;
      e.end_ns += shift;
      all.push_back(std::move(e));
    }
  }
  return all;
}

std::vector<TraceEvent> merge_over_ranks(const Trace& trace, const Communicator& comm) {
  return merge_over_ranks(trace.events(), trace.origin_ns(), comm);
}

void write_merged_chrome_trace(const std::vector<TraceEvent>& events, std::int64_t origin_ns, const Communicator& comm,
                               const std::string& path) {
  const auto all = merge_over_ranks(events, origin_ns, comm);
  if (comm.rank() == 0) write_chrome_trace(all, path);
}

void write_merged_chrome_trace(const Trace& trace, const Communicator& comm, const std::string& path) {
  write_merged_chrome_trace(trace.events(), trace.origin_ns(), comm, path);
}

}  // namespace korch
