// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Graph compiler: topology and type checks, regions, region numbering.
#include <korch/dataflow/compiler.hpp>
#include <korch/error.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace korch::dataflow {

const char* to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::Source: return "source";
    case NodeKind::Map: return "node";
    case NodeKind::Enumerate: return "enumerate node";
    case NodeKind::Aggregate: return "aggregate node";
    case NodeKind::Sink: return "sink";
  }
  return "node";
}

int CompiledGraph::index_of(const std::string& node) const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == node) return static_cast<int>(i);
  return -1;
}

std::string CompiledGraph::describe() const {
  std::ostringstream out;
  for (const Region& r : regions) {
    out << "region " << r.number << " (head '" << r.name << "'): members";
    for (int m : r.members) out << " " << nodes[m].name;
    if (r.number > 0) {
      out << "; terminals";
      for (int t : r.terminals) out << " " << nodes[t].name;
    }
    out << "\n";
  }
  return out.str();
}

namespace {

std::string names(const CompiledGraph& g, const std::vector<int>& ids) {
  std::string s;
  for (int i : ids) s += (s.empty() ? "'" : ", '") + g.nodes[i].name + "'";
  return s;
}

// Members of the region headed by enumerate node `head`: walk downstream, stopping after sinks
// and after the aggregates that close this region.
void collect_region(const CompiledGraph& g, int head, Region& r) {
  std::vector<int> stack{head};
  while (!stack.empty()) {
    int n = stack.back();
    stack.pop_back();
    r.members.push_back(n);
    const NodeSpec& s = g.nodes[n];
    bool closes = s.kind == NodeKind::Aggregate && s.closes == g.nodes[head].name;
    if (s.kind == NodeKind::Sink || closes) {
      r.terminals.push_back(n);
      continue;
    }
    for (int c : g.children[n]) stack.push_back(c);
  }
  std::sort(r.members.begin(), r.members.end());
  std::sort(r.terminals.begin(), r.terminals.end());
}

bool is_ancestor(const CompiledGraph& g, int a, int b) {  // a strictly upstream of b
  for (int p = g.parent[b]; p >= 0; p = g.parent[p])
    if (p == a) return true;
  return false;
}

// Node names: non-empty, without '.', unique; the first node is the only source.
std::map<std::string, int> index_node_names(const std::string& name, const std::vector<NodeSpec>& nodes) {
  const int n = static_cast<int>(nodes.size());
  if (n == 0 || nodes[0].kind != NodeKind::Source)
    throw Error::format(
        "dataflow graph '{}': the first node must be the source; add one with "
        ".source(name, ...) before any other node",
        name);
  std::map<std::string, int> index;
  for (int i = 0; i < n; ++i) {
    const NodeSpec& s = nodes[i];
    if (s.name.empty() || s.name.find('.') != std::string::npos)
      throw Error::format(
          "dataflow graph '{}': node name '{}' is invalid: use a non-empty name "
          "without '.'",
          name, s.name);
    if (!index.emplace(s.name, i).second)
      throw Error::format(
          "dataflow graph '{}': two nodes are named '{}': give each node its own "
          "name",
          name, s.name);
    if (i > 0 && s.kind == NodeKind::Source)
      throw Error::format(
          "dataflow graph '{}': '{}' is a second source; a graph has exactly one "
          "source",
          name, s.name);
  }
  return index;
}

// Joins node `i` to the channel its `from` names ("node" or "node.channel"), checking that the
// channel exists, is still free and carries the node's input type.
void connect_to_upstream(CompiledGraph& g, const std::map<std::string, int>& index, int i) {
  const std::string& name = g.name;
  const NodeSpec& s = g.nodes[i];
  std::string up = s.from, channel;
  if (auto dot = up.find('.'); dot != std::string::npos) {
    channel = up.substr(dot + 1);
    up = up.substr(0, dot);
  }
  auto it = index.find(up);
  if (it == index.end() || it->second >= i)
    throw Error::format(
        "dataflow graph '{}': {} '{}' reads from '{}', which is not a node "
        "defined before it: add '{}' first or fix the name",
        name, to_string(s.kind), s.name, s.from, up);
  int p = it->second;
  const NodeSpec& ps = g.nodes[p];
  if (ps.channels.empty())
    throw Error::format(
        "dataflow graph '{}': {} '{}' reads from sink '{}', which has no "
        "outputs",
        name, to_string(s.kind), s.name, up);
  int ch = 0;
  if (channel.empty()) {
    if (ps.channels.size() > 1)
      throw Error::format(
          "dataflow graph '{}': {} '{}' reads from '{}', which has {} channels: "
          "name one, e.g. '{}.{}'",
          name, to_string(s.kind), s.name, up, ps.channels.size(), up, ps.channels[0]);
  } else {
    auto c = std::find(ps.channels.begin(), ps.channels.end(), channel);
    if (c == ps.channels.end())
      throw Error::format("dataflow graph '{}': {} '{}' has no channel '{}' (read by '{}')", name, to_string(ps.kind),
                          up, channel, s.name);
    ch = static_cast<int>(c - ps.channels.begin());
  }
  if (g.children[p][ch] >= 0)
    throw Error::format(
        "dataflow graph '{}': channel '{}.{}' already feeds '{}' and cannot "
        "also feed '{}': every channel has one consumer (add a channel)",
        name, up, ps.channels[ch], g.nodes[g.children[p][ch]].name, s.name);
  if (ps.channel_types[ch] != s.input_type)
    throw Error::format(
        "dataflow graph '{}': channel '{}.{}' carries {} but {} '{}' takes {}: "
        "make the types equal",
        name, up, ps.channels[ch], ps.channel_types[ch].name(), to_string(s.kind), s.name, s.input_type.name());
  g.parent[i] = p;
  g.parent_channel[i] = ch;
  g.children[p][ch] = i;
}

// Parent and children of every node; every output channel feeds exactly one node.
void connect_nodes(CompiledGraph& g, const std::map<std::string, int>& index) {
  const int n = static_cast<int>(g.nodes.size());
  g.parent.assign(n, -1);
  g.parent_channel.assign(n, -1);
  g.children.resize(n);
  for (int i = 0; i < n; ++i) g.children[i].assign(g.nodes[i].channels.size(), -1);
  for (int i = 1; i < n; ++i) connect_to_upstream(g, index, i);
  for (int i = 0; i < n; ++i)
    for (std::size_t c = 0; c < g.children[i].size(); ++c)
      if (g.children[i][c] < 0)
        throw Error::format(
            "dataflow graph '{}': channel '{}.{}' is not connected: feed it to a "
            "node or a sink",
            g.name, g.nodes[i].name, g.nodes[i].channels[c]);
}

// Region 0: every node, ended by the sinks.
Region whole_graph_region(const CompiledGraph& g) {
  Region whole;
  whole.head = 0;
  whole.name = g.nodes[0].name;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    whole.members.push_back(i);
    if (g.nodes[i].kind == NodeKind::Sink) whole.terminals.push_back(i);
  }
  return whole;
}

// One region per enumerate node, unnumbered, in node order.
std::vector<Region> enumerate_regions(const CompiledGraph& g) {
  std::vector<Region> regs;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    if (g.nodes[i].kind != NodeKind::Enumerate) continue;
    Region r;
    r.head = i;
    r.name = g.nodes[i].name;
    collect_region(g, i, r);
    regs.push_back(std::move(r));
  }
  if (static_cast<int>(regs.size()) + 1 > max_regions)
    throw Error::format(
        "dataflow graph '{}': {} enumerate nodes make {} regions, more than the "
        "{} supported: split the graph",
        g.name, regs.size(), regs.size() + 1, max_regions);
  return regs;
}

// Every aggregate closes an enumerate node's region from inside it, with the head's parent type.
void check_aggregates(const CompiledGraph& g, const std::map<std::string, int>& index,
                      const std::vector<Region>& regs) {
  const std::string& name = g.name;
  const auto& nodes = g.nodes;
  for (int i = 0; i < static_cast<int>(nodes.size()); ++i) {
    const NodeSpec& s = nodes[i];
    if (s.kind != NodeKind::Aggregate) continue;
    auto it = index.find(s.closes);
    if (it == index.end() || nodes[it->second].kind != NodeKind::Enumerate)
      throw Error::format(
          "dataflow graph '{}': aggregate node '{}' closes '{}', which is not an "
          "enumerate node: name the enumerate node whose parents it aggregates",
          name, s.name, s.closes);
    const Region* r = nullptr;
    for (const Region& x : regs)
      if (x.head == it->second) r = &x;
    if (std::find(r->terminals.begin(), r->terminals.end(), i) == r->terminals.end())
      throw Error::format(
          "dataflow graph '{}': aggregate node '{}' closes the region of '{}' but "
          "is not inside it (it is not downstream of '{}', or the region already "
          "ends before it at {}): place it inside the region",
          name, s.name, s.closes, s.closes, names(g, r->terminals));
    if (nodes[it->second].parent_type != s.parent_type)
      throw Error::format(
          "dataflow graph '{}': aggregate node '{}' expects parents of type {} but "
          "enumerate node '{}' holds {}: make the types equal",
          name, s.name, s.parent_type.name(), s.closes, nodes[it->second].parent_type.name());
  }
}

// Regions may be nested but must not overlap.
void check_regions_nest(const CompiledGraph& g, const std::vector<Region>& regs) {
  for (std::size_t a = 0; a < regs.size(); ++a)
    for (std::size_t b = a + 1; b < regs.size(); ++b) {
      const auto& A = regs[a].members;
      const auto& B = regs[b].members;
      std::vector<int> both, only_a, only_b;
      std::set_intersection(A.begin(), A.end(), B.begin(), B.end(), std::back_inserter(both));
      std::set_difference(A.begin(), A.end(), B.begin(), B.end(), std::back_inserter(only_a));
      std::set_difference(B.begin(), B.end(), A.begin(), A.end(), std::back_inserter(only_b));
      if (both.empty() || only_a.empty() || only_b.empty()) continue;
      throw Error::format(
          "dataflow graph '{}': regions of enumerate nodes '{}' and '{}' overlap: {} in both, "
          "but {} only in '{}' and {} only in '{}'. Regions may nest but not overlap: close the "
          "inner region (aggregate) before the outer one ends",
          g.name, regs[a].name, regs[b].name, names(g, both), names(g, only_a), regs[a].name, names(g, only_b),
          regs[b].name);
    }
}

// The order in which `regs` take numbers 1, 2, ...: for regions A, B where A's head is upstream
// of B's head,
//   B contained in A  -> number(B) > number(A);   B disjoint from A -> number(B) < number(A).
// Region 0 (the whole graph) is below all. Constraints form a DAG; number them in
// topological order (ties: upstream head first).
std::vector<int> region_numbering_order(const CompiledGraph& g, const std::vector<Region>& regs) {
  const std::size_t m = regs.size();
  std::vector<std::vector<int>> less_than(m);  // edge x -> y: number(x) < number(y)
  std::vector<int> indeg(m, 0);
  auto contains = [&](std::size_t outer, std::size_t inner) {
    return std::includes(regs[outer].members.begin(), regs[outer].members.end(), regs[inner].members.begin(),
                         regs[inner].members.end());
  };
  for (std::size_t a = 0; a < m; ++a)
    for (std::size_t b = 0; b < m; ++b) {
      if (a == b || !is_ancestor(g, regs[a].head, regs[b].head)) continue;
      if (contains(a, b)) {
        less_than[a].push_back(static_cast<int>(b));
        ++indeg[b];
      } else {
        less_than[b].push_back(static_cast<int>(a));
        ++indeg[a];
      }
    }
  std::vector<int> order;
  std::vector<bool> done(m, false);
  for (std::size_t k = 0; k < m; ++k) {
    int pick = -1;
    for (std::size_t x = 0; x < m; ++x)
      if (!done[x] && indeg[x] == 0 && (pick < 0 || regs[x].head < regs[pick].head)) pick = static_cast<int>(x);
    if (pick < 0)
      throw Error::format(
          "dataflow graph '{}': region numbering has contradictory constraints "
          "among the regions of {}; this graph shape is not supported",
          g.name, [&] {
            std::vector<int> h;
            for (auto& r : regs) h.push_back(r.head);
            return names(g, h);
          }());
    done[pick] = true;
    order.push_back(pick);
    for (int y : less_than[pick]) --indeg[y];
  }
  return order;
}

// Each node's label, the regions it heads and the regions it ends, from the numbered regions.
void label_nodes(CompiledGraph& g) {
  const int n = static_cast<int>(g.nodes.size());
  g.label.assign(n, 0);
  g.heads.assign(n, -1);
  g.terminates.assign(n, 0u);
  for (const Region& r : g.regions) {
    if (r.number == 0) continue;
    g.heads[r.head] = r.number;
    for (int x : r.members) g.label[x] = std::max(g.label[x], r.number);
    for (int t : r.terminals) g.terminates[t] |= (1u << r.number);
  }
  for (int t = 0; t < n; ++t)
    if (g.nodes[t].kind == NodeKind::Sink) g.terminates[t] |= 1u;  // sinks end region 0 too
  // Containment must agree with the numbering: the label of every member is at least the region.
  for (const Region& r : g.regions)
    for (int x : r.members)
      if (g.label[x] < r.number)
        throw Error::format("dataflow graph '{}': internal error numbering region of '{}'", g.name, r.name);
}

}  // namespace

CompiledGraph compile_graph(const std::string& name, const std::vector<NodeSpec>& nodes) {
  CompiledGraph g;
  g.name = name;
  g.nodes = nodes;
  const std::map<std::string, int> index = index_node_names(name, nodes);
  connect_nodes(g, index);
  // Regions: region 0 is the whole graph; each enumerate node heads one more.
  Region whole = whole_graph_region(g);
  std::vector<Region> regs = enumerate_regions(g);
  check_aggregates(g, index, regs);
  check_regions_nest(g, regs);
  std::vector<int> order = region_numbering_order(g, regs);
  g.regions.push_back(whole);
  for (std::size_t k = 0; k < order.size(); ++k) {
    Region r = regs[order[k]];
    r.number = static_cast<int>(k) + 1;
    g.regions.push_back(std::move(r));
  }
  label_nodes(g);
  return g;
}

}  // namespace korch::dataflow
