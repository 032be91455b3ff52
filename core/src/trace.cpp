#include <korch/error.hpp>
#include <korch/trace.hpp>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>

namespace korch {

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

std::string Trace::to_chrome_json() const {
  using nlohmann::json;
  const auto evs = events();
  json list = json::array();
  std::map<std::string, int> tids;
  for (const auto& e : evs) {
    const std::string key = e.team + "/" + std::to_string(e.thread);
    auto [it, fresh] = tids.emplace(key, static_cast<int>(tids.size()) + 1);
    if (fresh) {
      list.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", it->second}, {"args", {{"name", key}}}});
    }
    list.push_back({{"name", e.name},
                    {"cat", e.category},
                    {"ph", "X"},
                    {"pid", 1},
                    {"tid", it->second},
                    {"ts", static_cast<double>(e.begin_ns) / 1000.0},
                    {"dur", static_cast<double>(e.end_ns - e.begin_ns) / 1000.0},
                    {"args", {{"item", e.item}, {"team", e.team}, {"thread", e.thread}}}});
  }
  return json{{"traceEvents", list}, {"displayTimeUnit", "ns"}}.dump();
}

void Trace::write_chrome_json(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw Error::format("trace: cannot open '{}' for writing: check the directory and permissions", path);
  out << to_chrome_json();
  if (!out) throw Error::format("trace: writing '{}' failed: check the free space", path);
}

}  // namespace korch
