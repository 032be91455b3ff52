// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "wait_order.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace korch::detail {

namespace {

// Kahn's order over `declared` (ties in declaration order); shorter than `declared` when the
// edges hold a cycle.
std::vector<std::string> publishers_first(const std::vector<std::string>& declared,
                                          const std::map<std::string, std::set<std::string>>& preds) {
  std::vector<std::string> order;
  std::set<std::string> done;
  for (bool progress = true; order.size() < declared.size() && progress;) {
    progress = false;
    for (const auto& n : declared) {
      if (done.count(n)) continue;
      bool ready = true;
      if (auto it = preds.find(n); it != preds.end())
        for (const auto& p : it->second) ready = ready && done.count(p);
      if (ready) {
        order.push_back(n);
        done.insert(n);
        progress = true;
      }
    }
  }
  return order;
}

}  // namespace

std::vector<std::string> wait_order(const Configuration& c, const std::vector<std::string>& declared) {
  std::map<std::string, std::set<std::string>> preds;
  for (const auto& e : c.all_work_edges()) preds[e.to].insert(e.from);
  std::map<std::string, std::set<std::string>> work_only = preds;
  for (const auto& e : c.threads) preds[e.to].insert(e.from);
  std::vector<std::string> order = publishers_first(declared, preds);
  if (order.size() == declared.size()) return order;
  order = publishers_first(declared, work_only);
  // Validation rejects cyclic work edges; should one get through, every node is still waited for.
  for (const auto& n : declared)
    if (std::find(order.begin(), order.end(), n) == order.end()) order.push_back(n);
  return order;
}

}  // namespace korch::detail
