// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/output_files.hpp>
#include <korch/trace.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

namespace korch {

TransferOverlap transfer_overlap(const std::vector<TraceEvent>& events) {
  return overlap_with_tasks(events, "transfer");
}

TransferOverlap overlap_with_tasks(const std::vector<TraceEvent>& all, const std::string& category,
                                   const std::string& name) {
  TransferOverlap result;
  std::map<int, std::vector<TraceEvent>> by_process;
  for (const auto& e : all) by_process[e.process].push_back(e);
  for (const auto& entry : by_process) {
    const auto& events = entry.second;
    // The union of the task intervals, as sorted disjoint [begin, end) pieces.
    std::vector<std::pair<std::int64_t, std::int64_t>> busy;
    for (const auto& e : events)
      if (e.category == "task" && e.end_ns > e.begin_ns) busy.emplace_back(e.begin_ns, e.end_ns);
    std::sort(busy.begin(), busy.end());
    std::vector<std::pair<std::int64_t, std::int64_t>> merged;
    for (const auto& b : busy) {
      if (!merged.empty() && b.first <= merged.back().second) {
        merged.back().second = std::max(merged.back().second, b.second);
      } else {
        merged.push_back(b);
      }
    }
    for (const auto& e : events) {
      if (e.category != category || e.end_ns <= e.begin_ns || (!name.empty() && e.name != name)) continue;
      ++result.transfers;
      result.transfer_ns += e.end_ns - e.begin_ns;
      // The first merged piece that ends after the transfer begins, then every piece it meets.
      auto it =
          std::upper_bound(merged.begin(), merged.end(), e.begin_ns,
                           [](std::int64_t t, const std::pair<std::int64_t, std::int64_t>& m) { return t < m.second; });
      for (; it != merged.end() && it->first < e.end_ns; ++it) {
        result.overlapped_ns += std::min(it->second, e.end_ns) - std::max(it->first, e.begin_ns);
      }
    }
  }
  return result;
}

TraceEvent bytes_counter(const std::string& kind, std::uint64_t bytes, std::int64_t at_ns, int process) {
  TraceEvent e;
  e.name = kind;
  e.category = kBytesCategory;
  e.begin_ns = e.end_ns = at_ns;
  e.process = process;
  e.bytes = bytes;
  return e;
}

std::string events_to_json(const std::vector<TraceEvent>& events) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : events)
    list.push_back({e.name, e.category, e.team, e.thread, e.item, e.begin_ns, e.end_ns, e.process, e.bytes});
  return list.dump();
}

std::vector<TraceEvent> events_from_json(const std::string& text) {
  std::vector<TraceEvent> out;
  try {
    for (const auto& row : nlohmann::json::parse(text)) {
      TraceEvent e;
      e.name = row.at(0).get<std::string>();
      e.category = row.at(1).get<std::string>();
      e.team = row.at(2).get<std::string>();
      e.thread = row.at(3).get<unsigned>();
      e.item = row.at(4).get<std::string>();
      e.begin_ns = row.at(5).get<std::int64_t>();
      e.end_ns = row.at(6).get<std::int64_t>();
      e.process = row.at(7).get<int>();
      if (row.size() > 8) e.bytes = row.at(8).get<std::uint64_t>();
      out.push_back(std::move(e));
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error::format(
        "trace: events text is not a list of [name, category, team, thread, item, begin_ns, end_ns, "
        "process, bytes] rows: {}",
        e.what());
  }
  return out;
}

void Trace::record(TraceEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
}

std::vector<TraceEvent> Trace::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

std::size_t Trace::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_.size();
}

void Trace::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.clear();
}

std::string Trace::to_chrome_json() const { return chrome_json(events()); }

std::string chrome_json(const std::vector<TraceEvent>& evs) {
  using nlohmann::json;
  json list = json::array();
  std::map<std::string, int> tids;
  std::map<int, bool> processes;
  for (const auto& e : evs) {
    const int pid = e.process + 1;
    if (processes.emplace(pid, true).second) {
      list.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"args", {{"name", "rank " + std::to_string(e.process)}}}});
    }
    if (is_bytes_counter(e)) {
      list.push_back({{"name", "bytes moved: " + e.name},
                      {"cat", e.category},
                      {"ph", "C"},
                      {"pid", pid},
                      {"ts", static_cast<double>(e.begin_ns) / 1000.0},
                      {"args", {{"bytes", e.bytes}}}});
      continue;
    }
    const std::string key = e.team + "/" + std::to_string(e.thread);
    auto [it, fresh] = tids.emplace(std::to_string(pid) + ":" + key, static_cast<int>(tids.size()) + 1);
    if (fresh) {
      list.push_back(
          {{"name", "thread_name"}, {"ph", "M"}, {"pid", pid}, {"tid", it->second}, {"args", {{"name", key}}}});
    }
    json args = {{"item", e.item}, {"team", e.team}, {"thread", e.thread}};
    if (e.bytes > 0) args["bytes"] = e.bytes;
    list.push_back({{"name", e.name},
                    {"cat", e.category},
                    {"ph", "X"},
                    {"pid", pid},
                    {"tid", it->second},
                    {"ts", static_cast<double>(e.begin_ns) / 1000.0},
                    {"dur", static_cast<double>(e.end_ns - e.begin_ns) / 1000.0},
                    {"args", std::move(args)}});
  }
  return json{{"traceEvents", list}, {"displayTimeUnit", "ns"}}.dump();
}

void Trace::write_chrome_json(const std::string& path) const { write_chrome_trace(events(), path); }

void write_chrome_trace(const std::vector<TraceEvent>& events, const std::string& path) {
  const std::string text = chrome_json(events);
  write_text_file_atomically(path, text);
}

}  // namespace korch
