// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The thin scheduler's checks of a configuration before Runtime::execute runs it.
#include <korch/bundle.hpp>
#include <korch/configuration.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>

#include "helper_types.hpp"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <optional>
#include <set>

namespace korch {

namespace {

enum class Location { none, host_packed, device, unpacked };
const char* to_string(Location l) {
  switch (l) {
    case Location::none: return "none";
    case Location::host_packed: return "packed on the host";
    case Location::device: return "on the device";
    case Location::unpacked: return "unpacked into the grid";
  }
  return "?";
}

struct Node {
  std::string name;
  bool team = false;
  const TeamConfig* t = nullptr;
  const HelperConfig* h = nullptr;
  DataType input() const { return team ? t->type : h->input; }
  DataType output() const { return team ? t->type : h->output; }
  std::string what() const { return fmt::format("{} '{}'", team ? "team" : "helper", excerpt(name)); }
};

}  // namespace

unsigned max_active_threads(const Configuration& c, const std::string& team) {
  std::set<std::string> visiting;
  std::function<unsigned(const std::string&)> visit = [&](const std::string& n) -> unsigned {
    const TeamConfig* t = c.find_team(n);
    if (!t)
      throw Error::format("configuration '{}': thread edge names '{}', which is not a team", excerpt(c.name),
                          excerpt(n));
    if (!visiting.insert(n).second) {
      throw Error::format(
          "configuration '{}': the thread publisher edges into team '{}' form a cycle: remove one of them",
          excerpt(c.name), excerpt(n));
    }
    unsigned total = t->initial_threads;
    for (const auto& e : c.threads)
      if (e.to == n) total += visit(e.from);
    visiting.erase(n);
    return total;
  };
  return visit(team);
}

namespace {

// The checks of one configuration, one method per rule; the graph they build (nodes, each node's
// subscriber and publishers, the distributor's entries) is shared between them.
class Checker {
 public:
  Checker(const Configuration& c, const RuntimeShape& shape, const Bundle* bundle)
      : c(c), shape(shape), bundle_(bundle), cn(excerpt(c.name)) {}

  void run() {
    check_nodes();
    check_work_edges();
    check_distributor();
    check_every_node_fed();
    check_no_work_cycle();
    check_packet_paths();
    check_threads();
    check_bundle();
  }

 private:
  // Names, counts, thread numbers and helper types.
  void check_nodes() {
    if (c.teams.empty()) throw Error::format("configuration '{}' has no teams: add at least one team", cn);
    if (c.teams.size() > shape.n_teams) {
      throw Error::format(
          "configuration '{}' needs {} teams but the runtime has {}: construct the Runtime with more teams", cn,
          c.teams.size(), shape.n_teams);
    }
    if (c.helpers.size() > shape.n_helpers) {
      throw Error::format(
          "configuration '{}' needs {} helpers but the runtime has {}: construct the Runtime with more helpers", cn,
          c.helpers.size(), shape.n_helpers);
    }
    for (const auto& t : c.teams) {
      if (t.name.empty() || t.name == "distributor") {
        throw Error::format("configuration '{}': a team is named '{}': use a non-empty name other than 'distributor'",
                            cn, excerpt(t.name));
      }
      Node n{t.name, true, &t, nullptr};
      if (!nodes.emplace(t.name, n).second)
        throw Error::format("configuration '{}': two nodes are named '{}': rename one", cn, excerpt(t.name));
      if (t.initial_threads > shape.threads_per_team) {
        throw Error::format(
            "configuration '{}': team '{}' starts with {} threads but runtime teams have {}: lower its threads", cn,
            excerpt(t.name), t.initial_threads, shape.threads_per_team);
      }
      if (t.action.empty())
        throw Error::format("configuration '{}': team '{}' names no action: set its action", cn, excerpt(t.name));
    }
    for (const auto& h : c.helpers) {
      if (h.name.empty() || h.name == "distributor") {
        throw Error::format("configuration '{}': a helper is named '{}': use a non-empty name other than 'distributor'",
                            cn, excerpt(h.name));
      }
      Node n{h.name, false, nullptr, &h};
      if (!nodes.emplace(h.name, n).second)
        throw Error::format("configuration '{}': two nodes are named '{}': rename one", cn, excerpt(h.name));
      std::string why;
      if (!detail::helper_types_ok(h, why)) {
        throw Error::format("configuration '{}': helper '{}' ({}) cannot take {} and give {}: a {} {}", cn,
                            excerpt(h.name), to_string(h.kind), to_string(h.input), to_string(h.output),
                            to_string(h.kind), why);
      }
      if (h.threads < 1 || h.threads > shape.helper_threads) {
        throw Error::format(
            "configuration '{}': helper '{}' asks for {} threads; helper teams have 1..{}: change its threads", cn,
            excerpt(h.name), h.threads, shape.helper_threads);
      }
      if ((h.kind == HelperKind::aggregator || h.kind == HelperKind::aggregator_mover) && h.packet_blocks < 1) {
        throw Error::format("configuration '{}': helper '{}' has packet_blocks 0: put at least one block in a packet",
                            cn, excerpt(h.name));
      }
      if (h.kind == HelperKind::router) check_router_fields(h);
    }
  }

  void check_router_fields(const HelperConfig& h) {
    if (!(h.fraction >= 0.0 && h.fraction <= 1.0)) {
      throw Error::format(
          "configuration '{}': helper '{}' (router) has fraction {}: give the share of its items for the "
          "first node of its to, a number from 0 to 1",
          cn, excerpt(h.name), h.fraction);
    }
    if (h.to.size() != 2) {
      throw Error::format(
          "configuration '{}': helper '{}' (router) names {} subscribers in its to: name two, the first "
          "for the fraction {} of its items and the second for the rest",
          cn, excerpt(h.name), h.to.size(), h.fraction);
    }
    if (h.to[0] == h.to[1]) {
      throw Error::format(
          "configuration '{}': helper '{}' (router) names '{}' twice in its to: name two different nodes", cn,
          excerpt(h.name), excerpt(h.to[0]));
    }
  }

  // One work subscriber per node; matching data types on each edge.
  void check_work_edges() {
    for (const auto& e : c.work) {
      const std::string edge = fmt::format("work edge '{}' -> '{}'", excerpt(e.from), excerpt(e.to));
      if (e.from == e.to)
        throw Error::format("configuration '{}': {} is a self-loop: a team may not push data to itself", cn, edge);
      if (!nodes.count(e.from))
        throw Error::format("configuration '{}': {} starts at unknown node '{}'", cn, edge, excerpt(e.from));
      if (!nodes.count(e.to))
        throw Error::format("configuration '{}': {} ends at unknown node '{}'", cn, edge, excerpt(e.to));
      const Node& a = nodes.at(e.from);
      const Node& b = nodes.at(e.to);
      if (!a.team && a.h->kind == HelperKind::router) {
        throw Error::format(
            "configuration '{}': {}: helper '{}' is a router and hands its items to the two nodes of its "
            "to: remove this work edge (or name '{}' in the router's to)",
            cn, edge, excerpt(e.from), excerpt(e.to));
      }
      if (!next.emplace(e.from, e.to).second) {
        throw Error::format("configuration '{}': {}: {} already publishes to '{}'; a node has one work subscriber", cn,
                            edge, a.what(), excerpt(next[e.from]));
      }
      if (a.output() != b.input()) {
        throw Error::format("configuration '{}': {}: '{}' gives {} but '{}' takes {}: put a {} between them", cn, edge,
                            excerpt(e.from), to_string(a.output()), excerpt(e.to), to_string(b.input()),
                            (is_packet(a.output()) && !is_packet(b.input()))
                                ? "splitter (or mover_unpacker_splitter)"
                                : "aggregator (or aggregator_mover) or splitter");
      }
      inputs[e.to].push_back(e.from);
      successors[e.from].push_back(e.to);
    }
    for (const auto& h : c.helpers) {
      if (h.kind != HelperKind::router) continue;
      for (std::size_t i = 0; i < h.to.size(); ++i) {
        const std::string edge =
            fmt::format("router edge '{}' -> '{}' (field to[{}])", excerpt(h.name), excerpt(h.to[i]), i);
        if (h.to[i] == h.name)
          throw Error::format("configuration '{}': {} is a self-loop: name another node", cn, edge);
        if (!nodes.count(h.to[i])) {
          throw Error::format(
              "configuration '{}': {} ends at unknown node '{}': name a team or helper of this configuration", cn, edge,
              excerpt(h.to[i]));
        }
        const Node& b = nodes.at(h.to[i]);
        if (b.input() != h.output) {
          throw Error::format(
              "configuration '{}': {}: the router gives {} but '{}' takes {}: route to a node that takes {} "
              "(an aggregator_mover in front of a device team)",
              cn, edge, to_string(h.output), excerpt(h.to[i]), to_string(b.input()), to_string(h.output));
        }
        inputs[h.to[i]].push_back(h.name);
        successors[h.name].push_back(h.to[i]);
      }
    }
  }

  // The distributor's groups and the entries they feed.
  void check_distributor() {
    const auto& d = c.distributor;
    if (d.groups.empty())
      throw Error::format("configuration '{}': the distributor has no groups: name the pipelines it feeds", cn);
    if (d.kind == DistributorKind::action_parallel) {
      for (std::size_t i = 0; i < d.groups.size(); ++i)
        if (d.groups[i].pipelines.size() != 1) {
          throw Error::format(
              "configuration '{}': distributor.groups[{}] has {} pipelines, but an action_parallel distributor "
              "feeds one pipeline per group: use data_parallel or hybrid",
              cn, i, d.groups[i].pipelines.size());
        }
    }
    if (d.kind == DistributorKind::data_parallel && d.groups.size() != 1) {
      throw Error::format("configuration '{}': a data_parallel distributor has one group, this one has {}: use hybrid",
                          cn, d.groups.size());
    }
    for (std::size_t i = 0; i < d.groups.size(); ++i) {
      const auto& g = d.groups[i];
      if (g.pipelines.empty())
        throw Error::format("configuration '{}': distributor.groups[{}] names no pipeline", cn, i);
      if (!g.weights.empty() && g.weights.size() != g.pipelines.size()) {
        throw Error::format(
            "configuration '{}': distributor.groups[{}] has {} weights for {} pipelines: give one weight each", cn, i,
            g.weights.size(), g.pipelines.size());
      }
      for (const auto& p : g.pipelines) {
        const std::string edge = fmt::format("work edge 'distributor' -> '{}'", excerpt(p));
        if (!nodes.count(p))
          throw Error::format("configuration '{}': {} ends at unknown node '{}'", cn, edge, excerpt(p));
        const DataType in = nodes.at(p).input();
        if (in != DataType::tile && in != DataType::block && in != DataType::action_metadata) {
          throw Error::format(
              "configuration '{}': {}: the distributor gives tiles, blocks or action metadata but '{}' takes "
              "{}: put an aggregator_mover in front of it",
              cn, edge, excerpt(p), to_string(in));
        }
        if (g.unit == RoutingUnit::tile && in != DataType::tile) {
          throw Error::format(
              "configuration '{}': {}: distributor.groups[{}] routes single tiles but '{}' takes {}: use unit block",
              cn, edge, i, excerpt(p), to_string(in));
        }
        if (!roots.emplace(p, g.unit).second) {
          throw Error::format("configuration '{}': {}: '{}' is fed by the distributor twice: name it in one group only",
                              cn, edge, excerpt(p));
        }
        inputs[p].push_back("distributor");
      }
    }
  }

  // Helpers have one publisher; every node is fed.
  void check_every_node_fed() {
    for (const auto& [name, n] : nodes) {
      const auto it = inputs.find(name);
      if (it == inputs.end()) {
        throw Error::format(
            "configuration '{}': {} receives no work: add a work edge into it or name it in a distributor group", cn,
            n.what());
      }
      if (!n.team && it->second.size() != 1) {
        throw Error::format(
            "configuration '{}': helper '{}' has {} publishers; a helper has exactly one: give each publisher its own "
            "helper",
            cn, name, it->second.size());
      }
    }
  }

  // No cycle of work edges (depth first along every node's subscribers, a router's two included).
  void check_no_work_cycle() {
    std::set<std::string> done, on_path;
    std::function<void(const std::string&)> visit = [&](const std::string& at) {
      if (done.count(at)) return;
      on_path.insert(at);
      for (const auto& to : successors[at]) {
        if (on_path.count(to)) {
          throw Error::format("configuration '{}': work edge '{}' -> '{}' closes a cycle of work edges: remove it", cn,
                              excerpt(at), excerpt(to));
        }
        visit(to);
      }
      on_path.erase(at);
      done.insert(at);
    };
    for (const auto& [name, n] : nodes) visit(name);
  }

  // Aggregators receive complete blocks; packets come back to the grid.
  void check_packet_paths() {
    for (const auto& [name, n] : nodes) {
      const Location l = location_of(name);
      if (is_packet(n.output()) && !next.count(name) && l != Location::unpacked) {
        throw Error::format(
            "configuration '{}': {} is the end of a pipeline but its packets are {}, never unpacked into the "
            "grid: add a work edge to a mover_unpacker (or unpacker) helper",
            cn, n.what(), to_string(l));
      }
    }
  }

  // Thread edges and the thread budget of every team.
  void check_threads() {
    std::set<std::string> thread_publishers;
    for (const auto& e : c.threads) {
      const std::string edge = fmt::format("thread edge '{}' -> '{}'", excerpt(e.from), excerpt(e.to));
      if (e.from == e.to)
        throw Error::format("configuration '{}': {} is a self-loop: a team may not push threads to itself", cn, edge);
      if (!c.find_team(e.from) || !c.find_team(e.to)) {
        throw Error::format("configuration '{}': {}: both ends of a thread edge must be teams", cn, edge);
      }
      if (!thread_publishers.insert(e.from).second) {
        throw Error::format(
            "configuration '{}': {}: team '{}' already publishes threads; a team has one thread subscriber", cn, edge,
            excerpt(e.from));
      }
    }
    for (const auto& t : c.teams) {
      const unsigned most = max_active_threads(c, t.name);
      if (most > shape.threads_per_team) {
        throw Error::format(
            "configuration '{}': team '{}' may get {} active threads (its {} plus its thread publishers') but "
            "runtime teams have {} (Req ThreadBalance): start it or its publishers with fewer threads",
            cn, excerpt(t.name), most, t.initial_threads, shape.threads_per_team);
      }
      if (most == 0) {
        throw Error::format(
            "configuration '{}': team '{}' starts with 0 threads and has no thread publisher: it would never "
            "run; give it threads or a thread publisher",
            cn, excerpt(t.name));
      }
    }
  }

  // The bundle has exactly the actions the teams apply.
  void check_bundle() {
    if (bundle_) {
      if (bundle_->size() > shape.n_teams) {
        throw Error::format(
            "bundle '{}' has {} routines but the runtime has {} teams: split the bundle or construct the "
            "Runtime with more teams",
            excerpt(bundle_->name()), bundle_->size(), shape.n_teams);
      }
      std::set<std::string> used;
      for (const auto& t : c.teams) {
        if (!bundle_->find(t.action)) {
          throw Error::format(
              "configuration '{}': team '{}' applies action '{}', which bundle '{}' does not have: add it to the "
              "bundle",
              cn, excerpt(t.name), excerpt(t.action), excerpt(bundle_->name()));
        }
        used.insert(t.action);
      }
      for (const auto& r : bundle_->routines()) {
        if (!used.count(r.name())) {
          throw Error::format(
              "bundle '{}': routine '{}' is applied by no team of configuration '{}': remove it or assign it to a team",
              excerpt(bundle_->name()), excerpt(r.name()), cn);
        }
      }
    }
  }

  // Whether a distributor group or a router upstream of `name` routes single tiles.
  bool fed_by_tile_routing(const std::string& name) {
    if (auto r = roots.find(name); r != roots.end() && r->second == RoutingUnit::tile) return true;
    for (const auto& from : inputs[name]) {
      if (from == "distributor") continue;
      const Node& p = nodes.at(from);
      if (!p.team && p.h->kind == HelperKind::router && p.h->unit == RoutingUnit::tile) return true;
      if (fed_by_tile_routing(from)) return true;
    }
    return false;
  }

  // Where the packets that `name` gives are (memoized).
  Location location_of(const std::string& name) {
    if (auto it = location.find(name); it != location.end()) return it->second;
    const Node& n = nodes.at(name);
    Location in = Location::none;
    if (is_packet(n.input())) {
      std::optional<Location> agreed;
      for (const auto& from : inputs[name]) {
        const Location l = location_of(from);
        if (agreed && *agreed != l) {
          throw Error::format("configuration '{}': {} receives packets {} and packets {}: move them to one place first",
                              cn, n.what(), to_string(*agreed), to_string(l));
        }
        agreed = l;
      }
      in = agreed.value_or(Location::none);
    }
    Location out = in;
    if (!n.team) {
      const auto& h = *n.h;
      auto need = [&](Location want, const char* fix) {
        if (in != want) {
          throw Error::format("configuration '{}': work edge into helper '{}': a {} needs packets {}, these are {}: {}",
                              cn, name, to_string(h.kind), to_string(want), to_string(in), fix);
        }
      };
      switch (h.kind) {
        case HelperKind::aggregator: out = is_packet(h.output) ? Location::host_packed : Location::none; break;
        case HelperKind::aggregator_mover: out = Location::device; break;
        case HelperKind::mover:
          if (h.direction == MoveDirection::host_to_device) {
            need(Location::host_packed, "feed it from an aggregator");
            out = Location::device;
          } else {
            need(Location::device, "move them to the device first");
            out = h.direction == MoveDirection::device_to_host ? Location::host_packed : Location::device;
          }
          break;
        case HelperKind::unpacker:
          need(Location::host_packed, "move them back to the host first");
          out = Location::unpacked;
          break;
        case HelperKind::mover_unpacker:
          need(Location::device, "use an unpacker for packets on the host");
          out = Location::unpacked;
          break;
        case HelperKind::mover_unpacker_splitter:
          need(Location::device, "move them to the device first");
          out = Location::none;
          break;
        case HelperKind::splitter:
          if (is_packet(h.input))
            need(Location::unpacked, "put an unpacker (or use mover_unpacker_splitter) in front of it");
          out = Location::none;
          break;
        case HelperKind::router: out = Location::none; break;
      }
      if ((h.kind == HelperKind::aggregator || h.kind == HelperKind::aggregator_mover) && h.input == DataType::tile &&
          fed_by_tile_routing(name)) {
        throw Error::format(
            "configuration '{}': helper '{}' may receive incomplete blocks: a distributor group or router "
            "upstream routes single tiles; give it unit block so every tile of a block goes the same way",
            cn, name);
      }
    }
    location[name] = out;
    return out;
  }

  const Configuration& c;
  const RuntimeShape& shape;
  const Bundle* bundle_;
  const std::string cn;  // an excerpt of the configuration's name, for messages
  std::map<std::string, Node> nodes;
  std::map<std::string, std::string> next;                     // one work subscriber per node
  std::map<std::string, std::vector<std::string>> inputs;      // publishers per node ("distributor" for entries)
  std::map<std::string, std::vector<std::string>> successors;  // work subscribers per node (a router has two)
  std::map<std::string, RoutingUnit> roots;                    // the distributor's entries and their routing unit
  std::map<std::string, Location> location;
};

}  // namespace

void validate(const Configuration& c, const RuntimeShape& shape, const Bundle* bundle) {
  Checker(c, shape, bundle).run();
}

}  // namespace korch
