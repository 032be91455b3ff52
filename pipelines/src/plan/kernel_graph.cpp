#include <korch/error.hpp>
#include <korch/plan/kernel_graph.hpp>

#include <nlohmann/json.hpp>

#include <sstream>

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
  for (std::size_t i = 0; i < actions_.size(); ++i)
    if (actions_[i].action == action) return static_cast<int>(i);
  return -1;
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
    json o = {{"kind", to_string(b.barrier.kind)}, {"after_actions", b.after_action}, {"removed", b.removed},
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
    out << "  a" << i << " [label=\"" << a.action << "\\n" << a.iterator.describe() << ", epoch " << epochs_[i]
        << (hints.empty() ? "" : "\\n" + hints.substr(1)) << "\"];\n";
  }
  for (const auto& d : dependences_) {
    out << "  a" << d.from << " -> a" << d.to << " [label=\"" << to_string(d.kind) << " " << d.variable
        << (d.guard_fill ? " (fill)" : "") << "\"" << (d.barrier ? ", style=bold, color=red" : "") << "];\n";
  }
  for (std::size_t i = 0; i < barriers_.size(); ++i) {
    const auto& b = barriers_[i];
    out << "  b" << i << " [shape=plaintext, label=\"" << to_string(b.barrier.kind)
        << (b.barrier.name.empty() ? "" : " " + b.barrier.name) << (b.removed ? " (removed)" : "") << "\"];\n";
    if (b.after_action > 0) out << "  a" << b.after_action - 1 << " -> b" << i << " [style=dotted];\n";
    if (b.after_action < static_cast<int>(actions_.size())) out << "  b" << i << " -> a" << b.after_action << " [style=dotted];\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace korch::plan
