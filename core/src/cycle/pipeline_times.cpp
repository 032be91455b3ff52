// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "pipeline_times.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace korch::detail {

namespace {

// The nodes each node hands its work to: work edges, and a router's two subscribers.
std::map<std::string, std::vector<std::string>> downstream_of(const Configuration& c) {
  std::map<std::string, std::vector<std::string>> next;
  for (const Edge& e : c.work) next[e.from].push_back(e.to);
  for (const HelperConfig& h : c.helpers)
    if (h.kind == HelperKind::router)
      for (const std::string& to : h.to) next[h.name].push_back(to);
  return next;
}

}  // namespace

std::vector<double> pipeline_seconds(const Configuration& c, const DistributorGroup& group,
                                     const std::vector<NodeReport>& reports,
                                     std::chrono::steady_clock::time_point since) {
  std::map<std::string, std::chrono::steady_clock::time_point> finished;
  for (const NodeReport& r : reports) finished[r.node] = r.cycle.finished;
  const auto next = downstream_of(c);
  std::vector<double> seconds;
  for (const std::string& entry : group.pipelines) {
    std::set<std::string> seen{entry};
    std::vector<std::string> todo{entry};
    auto last = since;
    while (!todo.empty()) {
      const std::string node = todo.back();
      todo.pop_back();
      if (auto f = finished.find(node); f != finished.end()) last = std::max(last, f->second);
      if (auto n = next.find(node); n != next.end())
        for (const std::string& to : n->second)
          if (seen.insert(to).second) todo.push_back(to);
    }
    seconds.push_back(std::chrono::duration<double>(last - since).count());
  }
  return seconds;
}

}  // namespace korch::detail
