// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/configurations/drawing.hpp>

#include <fmt/format.h>

namespace korch::configurations {

namespace {

// A DOT string literal: names and labels may hold quotes or backslashes.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

bool on_device(DataType type) { return is_packet(type) || type == DataType::action_metadata; }

std::string list(const std::vector<int>& v) {
  std::string out;
  for (const int i : v) out += fmt::format("{}{}", out.empty() ? "" : " ", i);
  return out;
}

// What an aggregator's packets carry, one line: "in 0, in-out 1".
std::string carried(const PacketVariables& v) {
  std::string out;
  const auto add = [&](const char* what, const std::vector<int>& vars) {
    if (!vars.empty()) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", what, list(vars));
  };
  add("in", v.copy_in);
  add("in-out", v.copy_in_out);
  add("out", v.copy_out);
  if (out.empty()) out = "every variable in-out";
  if (v.scratch > 0) out += fmt::format(", {} scratch", v.scratch);
  add("faces in", v.face_copy_in);
  add("faces in-out", v.face_copy_in_out);
  add("faces out", v.face_copy_out);
  return "carries " + out;
}

std::string team_node(const TeamConfig& t) {
  const std::string threads = t.initial_threads == 0   ? std::string("threads handed on")
                              : t.initial_threads == 1 ? std::string("1 thread")
                                                       : fmt::format("{} threads", t.initial_threads);
  return fmt::format("  {} [shape=box, style=\"rounded,filled\", fillcolor={}, label={}];\n", quoted(t.name),
                     on_device(t.type) ? "palegreen" : "lightblue",
                     quoted(fmt::format("{}\naction {}\n{}, {}", t.name, t.action, to_string(t.type), threads)));
}

std::string helper_node(const HelperConfig& h) {
  std::string label = fmt::format("{}\n{}", h.name, to_string(h.kind));
  if (h.kind == HelperKind::mover) label += fmt::format("\n{}", to_string(h.direction));
  if (h.kind == HelperKind::aggregator || h.kind == HelperKind::aggregator_mover) {
    label += fmt::format("\n{} block{} per packet\n{}", h.packet_blocks, h.packet_blocks == 1 ? "" : "s",
                         carried(h.variables));
  }
  // A router is the diamond of a split in the middle of a pipeline, as the distributor is of one at its start.
  const char* shape = h.kind == HelperKind::router ? "diamond" : "ellipse";
  return fmt::format("  {} [shape={}, style=filled, fillcolor=lightyellow, label={}];\n", quoted(h.name), shape,
                     quoted(label));
}

DataType output_of(const Configuration& c, const std::string& node) {
  if (const TeamConfig* t = c.find_team(node)) return t->type;
  if (const HelperConfig* h = c.find_helper(node)) return h->output;
  return DataType::tile;
}
DataType input_of(const Configuration& c, const std::string& node) {
  if (const TeamConfig* t = c.find_team(node)) return t->type;
  if (const HelperConfig* h = c.find_helper(node)) return h->input;
  return DataType::tile;
}

std::string distributor_edges(const Configuration& c) {
  std::string out;
  for (std::size_t g = 0; g < c.distributor.groups.size(); ++g) {
    const auto& group = c.distributor.groups[g];
    for (std::size_t i = 0; i < group.pipelines.size(); ++i) {
      std::string label = fmt::format("{}s, group {}", to_string(input_of(c, group.pipelines[i])), g);
      if (group.pipelines.size() > 1) {
        const double weight = i < group.weights.size() ? group.weights[i] : 1.0;
        if (group.policy == DistributionPolicy::queue_depth)
          label += ", shortest queue";
        else if (group.policy == DistributionPolicy::throughput)
          label += fmt::format(", by throughput (weight {:.3g} at first)", weight);
        else
          label += fmt::format(", weight {:.3g}", weight);
      }
      out += fmt::format("  distributor -> {} [label={}];\n", quoted(group.pipelines[i]), quoted(label));
    }
  }
  return out;
}

}  // namespace

std::string to_dot(const Configuration& c) {
  std::string out = fmt::format(
      "digraph {} {{\n  rankdir=LR;\n  ranksep=0.35;\n  labelloc=t;\n  fontname=\"Helvetica\";\n  label={};\n  node "
      "[fontname=\"Helvetica\", fontsize=11];\n"
      "  edge [fontname=\"Helvetica\", fontsize=9];\n  distributor [shape=diamond, style=filled, fillcolor=lightgrey, "
      "label={}];\n",
      quoted(c.name), quoted(fmt::format("{} ({} distributor)", c.name, to_string(c.distributor.kind))),
      quoted(fmt::format("distributor\n{}", to_string(c.distributor.kind))));
  for (const auto& t : c.teams) out += team_node(t);
  for (const auto& h : c.helpers) out += helper_node(h);
  out += distributor_edges(c);
  for (const auto& e : c.work)
    out +=
        fmt::format("  {} -> {} [label={}];\n", quoted(e.from), quoted(e.to), quoted(to_string(output_of(c, e.from))));
  for (const auto& h : c.helpers) {
    if (h.kind != HelperKind::router) continue;
    for (std::size_t i = 0; i < h.to.size(); ++i) {
      const double share = i == 0 ? h.fraction : 1.0 - h.fraction;
      out += fmt::format("  {} -> {} [label=\"{:.3g} of the {}s\"];\n", quoted(h.name), quoted(h.to[i]), share,
                         to_string(h.unit));
    }
  }
  for (const auto& e : c.threads)
    out += fmt::format("  {} -> {} [style=dashed, color=grey40, fontcolor=grey40, label=\"threads\"];\n",
                       quoted(e.from), quoted(e.to));
  return out + "}\n";
}

}  // namespace korch::configurations
