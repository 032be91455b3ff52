// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/plan/kernel_graph.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace korch::plan {

using nlohmann::json;

const char* to_string(DependenceKind kind) noexcept {
  switch (kind) {
    case DependenceKind::raw: return "RAW";
    case DependenceKind::war: return "WAR";
    case DependenceKind::waw: return "WAW";
  }
  return "?";
}

KernelGraph::KernelGraph(const Operation& operation) : operation_(operation) {
  operation_.check();
  int epoch = 0;
  for (const auto& s : operation_.steps) {
    if (s.is_action) {
      index_.emplace(s.action.action, static_cast<int>(actions_.size()));
      actions_.push_back(s.action);
      epochs_.push_back(epoch);
      continue;
    }
    GraphBarrier b{s.barrier, static_cast<int>(actions_.size()), s.barrier.unless.holds(operation_.parameters)};
    if (!b.removed) ++epoch;
    barriers_.push_back(std::move(b));
  }
  const int n = static_cast<int>(actions_.size());
  into_.resize(actions_.size());
  for (int to = 0; to < n; ++to) {
    const ActionDeclaration& b = actions_[static_cast<std::size_t>(to)];
    for (int from = 0; from < to; ++from) {
      const ActionDeclaration& a = actions_[static_cast<std::size_t>(from)];
      auto add = [&](DependenceKind kind, const std::string& v, bool barrier, bool fill) {
        into_[static_cast<std::size_t>(to)].push_back(static_cast<int>(dependences_.size()));
        dependences_.push_back(Dependence{from, to, kind, v, barrier, fill});
      };
      for (const auto& w : a.writes) {
        const int s = b.stencil_of(w);
        if (s >= 0) add(DependenceKind::raw, w, s > 0, s > 0);
        if (b.writes_variable(w)) add(DependenceKind::waw, w, false, false);
      }
      for (const auto& r : a.reads)
        if (b.writes_variable(r.variable)) add(DependenceKind::war, r.variable, r.stencil > 0, false);
    }
  }
}

int KernelGraph::find(const std::string& action) const noexcept {
  const auto it = index_.find(action);
  return it == index_.end() ? -1 : it->second;
}

std::string KernelGraph::to_json() const {
  json j;
  j["operation"] = operation_.name;
  j["actions"] = json::array();
  for (std::size_t i = 0; i < actions_.size(); ++i) {
    json a = json::parse(actions_[i].to_json());
    a["epoch"] = epochs_[i];
    j["actions"].push_back(a);
  }
  j["dependences"] = json::array();
  for (const auto& d : dependences_) {
    j["dependences"].push_back({{"from", actions_[static_cast<std::size_t>(d.from)].action},
                                {"to", actions_[static_cast<std::size_t>(d.to)].action},
                                {"kind", to_string(d.kind)},
                                {"variable", d.variable},
                                {"barrier", d.barrier},
                                {"guard_fill", d.guard_fill}});
  }
  j["barriers"] = json::array();
  for (const auto& b : barriers_) {
    json o = {{"kind", to_string(b.barrier.kind)},
              {"after_actions", b.after_action},
              {"removed", b.removed},
              {"variables", b.barrier.variables}};
    if (!b.barrier.name.empty()) o["name"] = b.barrier.name;
    if (!b.barrier.unless.empty()) o["unless"] = b.barrier.unless.text();
    j["barriers"].push_back(o);
  }
  return j.dump(2);
}

std::string KernelGraph::to_dot() const {
  std::ostringstream out;
  out << "digraph \"" << operation_.name << "\" {\n  rankdir=TB;\n  node [shape=box];\n";
  for (std::size_t i = 0; i < actions_.size(); ++i) {
    const auto& a = actions_[i];
    std::string hints;
    if (a.hints.short_running) hints += " short";
    if (a.hints.heavy) hints += " heavy";
    if (a.hints.host_only) hints += " host_only";
    if (a.hints.device_only) hints += " device_only";
    out << "  a" << i << " [label=\"" << a.action << "\\n"
        << a.iterator.describe() << ", epoch " << epochs_[i] << (hints.empty() ? "" : "\\n" + hints.substr(1))
        << "\"];\n";
  }
  // One edge per pair of actions, labelled with all its dependences; a plain edge that a path
  // through other actions implies is left out (the ordering it shows is already drawn), barrier
  // edges always stay. graph.json keeps every dependence.
  const std::size_t n = actions_.size();
  std::map<std::pair<int, int>, std::pair<std::string, bool>> edges;  // label, barrier
  for (const auto& d : dependences_) {
    auto& e = edges[{d.from, d.to}];
    e.first += (e.first.empty() ? "" : "\\n") + std::string(to_string(d.kind)) + " " + d.variable +
               (d.guard_fill ? " (fill)" : "");
    e.second = e.second || d.barrier;
  }
  // reach[u]: the actions a path of one or more edges leads to from u, as bits. An edge u -> v is
  // implied when a successor w < v of u reaches v: successors in ascending order, their reach
  // gathered as they pass, so drawing costs O(edges × actions / 64), not O(edges²).
  const std::size_t words = (n + 63) / 64;
  std::vector<std::vector<int>> successors(n);
  for (const auto& [pair, e] : edges) successors[static_cast<std::size_t>(pair.first)].push_back(pair.second);
  std::vector<std::uint64_t> reach(n * words, 0);
  for (std::size_t u = n; u-- > 0;)
    for (int s : successors[u]) {
      const auto v = static_cast<std::size_t>(s);
      reach[u * words + v / 64] |= std::uint64_t{1} << (v % 64);
      for (std::size_t k = 0; k < words; ++k) reach[u * words + k] |= reach[v * words + k];
    }
  std::set<std::pair<int, int>> implied;
  std::vector<std::uint64_t> covered(words);
  for (std::size_t u = 0; u < n; ++u) {
    std::fill(covered.begin(), covered.end(), 0);
    for (int s : successors[u]) {
      const auto v = static_cast<std::size_t>(s);
      if ((covered[v / 64] >> (v % 64)) & 1u) implied.emplace(static_cast<int>(u), s);
      for (std::size_t k = 0; k < words; ++k) covered[k] |= reach[v * words + k];
    }
  }
  std::size_t left_out = 0;
  for (const auto& [pair, e] : edges) {
    if (!e.second && implied.count(pair)) {
      ++left_out;
      continue;
    }
    out << "  a" << pair.first << " -> a" << pair.second << " [label=\"" << e.first << "\""
        << (e.second ? ", style=bold, color=red" : "") << "];\n";
  }
  if (left_out > 0) {
    out << "  label=\"" << dependences_.size() << " dependences; " << left_out
        << " plain edges implied by others not drawn (graph.json lists all)\";\n  labelloc=b;\n";
  }
  for (std::size_t i = 0; i < barriers_.size(); ++i) {
    const auto& b = barriers_[i];
    out << "  b" << i << " [shape=plaintext, label=\"" << to_string(b.barrier.kind)
        << (b.barrier.name.empty() ? "" : " " + b.barrier.name) << (b.removed ? " (removed)" : "") << "\"];\n";
    if (b.after_action > 0) out << "  a" << b.after_action - 1 << " -> b" << i << " [style=dotted];\n";
    if (b.after_action < static_cast<int>(actions_.size()))
      out << "  b" << i << " -> a" << b.after_action << " [style=dotted];\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace korch::plan
