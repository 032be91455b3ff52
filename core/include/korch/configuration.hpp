// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A thread team configuration: teams, helpers, the work
// publisher/subscriber edges that make pipelines, thread publisher/subscriber edges, the distributor
// and the initial thread counts. Describable in JSON; validated by the thin scheduler
// (validate(), configuration_validation.cpp) before Runtime::execute runs it.
//
// JSON form (every key but "name", "teams" and "distributor" optional):
// {
//   "name": "cpu_gpu_data_parallel",
//   "teams":   [ {"name": "cpu", "type": "tile", "action": "A", "threads": 2}, ... ],
//   "helpers": [ {"name": "to_gpu", "kind": "aggregator_mover", "input": "block",
//                 "output": "packet_of_blocks", "threads": 1, "packet_blocks": 2,
//                 "variables": {"copy_in": [], "copy_in_out": [0], "copy_out": [], "scratch": 0,
//                               "face_copy_in": [], "face_copy_in_out": [], "face_copy_out": [0]}},
//                {"name": "dm", "kind": "mover", "direction": "device_to_host", ...},
//                {"name": "split", "kind": "router", "input": "tile", "fraction": 0.25,
//                 "to": ["to_gpu", "cpu"], "unit": "block"} ],
//   "work":    [ {"from": "to_gpu", "to": "gpu"}, ... ],
//   "threads": [ {"from": "cpu", "to": "post"} ],
//   "distributor": {"kind": "data_parallel",
//                   "groups": [ {"pipelines": ["cpu", "to_gpu"], "policy": "fixed_fraction",
//                                "weights": [1, 3], "unit": "block"} ]}
// }
// Data types: tile, block, packet_of_blocks, packet_of_tiles, action_metadata. Helper kinds: mover,
// unpacker, splitter, aggregator (tiles to blocks; tiles or blocks to packets or to action_metadata,
// one item per complete block), mover_unpacker, mover_unpacker_splitter, aggregator_mover, router
// (a data-parallel split in the middle of a pipeline: the fraction of its items given by "fraction"
// goes to the first node of "to", the rest to the second; router.hpp).
// Distributor kinds: action_parallel (each group one pipeline: every item goes into every
// pipeline), data_parallel (one group: every item into exactly one pipeline), hybrid (several
// groups: action parallel across groups, data parallel inside each). Policies: static (fixed
// fractions given by weights) and dynamic (the pipeline whose entry queue is shortest relative to
// its weight). Units: block (every tile of a block goes the same way; required upstream of an
// aggregator) or tile.
#pragma once

#include <korch/data_type.hpp>
#include <korch/packet_variables.hpp>

#include <cstddef>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace korch {

class Bundle;

enum class HelperKind {
  mover,
  unpacker,
  splitter,
  aggregator,
  mover_unpacker,
  mover_unpacker_splitter,
  aggregator_mover,
  router
};
enum class MoveDirection { host_to_device, device_to_host, device_to_device };
enum class DistributorKind { action_parallel, data_parallel, hybrid };
// fixed_fraction: each pipeline of a group gets its weight's share of the blocks; queue_depth: each
// block goes to the pipeline with the shortest queue; throughput: the weights at first, then each
// pipeline the share that the rates measured in the cycles before let all finish soonest (a slow
// pipeline may get none; docs/configurations.md, "Distribution by throughput"). JSON uses the same
// words ("static" and "dynamic" are read as synonyms of the first two).
enum class DistributionPolicy { fixed_fraction, queue_depth, throughput };
enum class RoutingUnit { block, tile };

const char* to_string(HelperKind kind) noexcept;
const char* to_string(MoveDirection direction) noexcept;
const char* to_string(DistributorKind kind) noexcept;
const char* to_string(DistributionPolicy policy) noexcept;
const char* to_string(RoutingUnit unit) noexcept;

struct TeamConfig {
  std::string name;
  DataType type = DataType::tile;
  std::string action;            // the bundle routine this team applies
  unsigned initial_threads = 1;  // activated at start_cycle; more may arrive from thread publishers
};

struct HelperConfig {
  std::string name;
  HelperKind kind = HelperKind::mover;
  DataType input = DataType::packet_of_blocks;
  DataType output = DataType::packet_of_blocks;
  unsigned threads = 1;
  MoveDirection direction = MoveDirection::host_to_device;  // mover only
  std::size_t packet_blocks = 4;                            // aggregators: blocks per packet
  PacketVariables variables;                                // aggregators: what the packets carry
  // Routers only: the share of the items (or blocks) that goes to to[0]; the rest go to to[1].
  double fraction = 0.5;
  std::vector<std::string> to;            // routers: their two work subscribers
  RoutingUnit unit = RoutingUnit::block;  // routers: whole blocks go one way, or single tiles
};

struct Edge {
  std::string from;
  std::string to;
};

struct DistributorGroup {
  std::vector<std::string> pipelines;  // entry nodes (teams or helpers)
  DistributionPolicy policy = DistributionPolicy::fixed_fraction;
  std::vector<double> weights;  // empty: equal
  RoutingUnit unit = RoutingUnit::block;
};

struct DistributorConfig {
  DistributorKind kind = DistributorKind::action_parallel;
  std::vector<DistributorGroup> groups;
};

// One slot of a configuration: an action name its teams apply (A, B, C in the built-ins), which
// Configuration::bind_actions replaces with the name of a bundle's routine.
struct ActionSlot {
  std::string name;                // the action name its teams apply
  std::vector<std::string> teams;  // those teams, in configuration order
  // The configuration runs without this slot: its teams only finish items other teams have worked
  // on (no work subscriber, not fed by the distributor or a router, no threads handed on, fed by
  // teams or a mover_unpacker_splitter). Left unbound, bind_actions drops them.
  bool optional = false;
  std::string description;  // one line; the built-ins have one (configurations::slots), others ""
};

// The bundle's action names for a configuration's slots, by position or by slot:
//   {"advect", "diffuse"}                  the first slot, then the second, ... (Configuration::slots order)
//   {{"A", "advect"}, {"C", "diffuse"}}    slot A, slot C
// A std::vector<std::string> or a std::map<std::string, std::string> built at run time works too.
class ActionBinding {
 public:
  // An action name given by position. It has no constructor from two strings, so that
  // {{"A", "advect"}} always reads as a slot and its action, never as a name made of two pointers.
  struct Name {
    Name(const char* n) : value(n) {}  // implicit, so that {"advect", "diffuse"} reads as two names
    Name(std::string n) : value(std::move(n)) {}
    std::string value;
  };
  struct SlotAction {
    std::string slot;
    std::string action;
  };

  ActionBinding() = default;  // binds nothing
  ActionBinding(std::initializer_list<Name> by_position);
  ActionBinding(std::initializer_list<SlotAction> by_slot);
  ActionBinding(const std::vector<std::string>& by_position);
  ActionBinding(const std::map<std::string, std::string>& by_slot);

  bool by_position() const noexcept { return by_position_; }
  const std::vector<std::string>& names() const noexcept { return names_; }  // by position
  const std::vector<SlotAction>& pairs() const noexcept { return pairs_; }   // by slot, as given

 private:
  bool by_position_ = true;
  std::vector<std::string> names_;
  std::vector<SlotAction> pairs_;
};

struct Configuration {
  std::string name;
  std::vector<TeamConfig> teams;
  std::vector<HelperConfig> helpers;
  std::vector<Edge> work;
  std::vector<Edge> threads;
  DistributorConfig distributor;

  // Parses the JSON form above. Throws korch::Error naming the offending field, e.g.
  // "configuration 'x': field teams[1].threads: expected an unsigned integer, got \"two\"".
  static Configuration from_json(const std::string& text);
  std::string to_json() const;

  // `work` plus an edge from each router to each node of its `to`: every path an item can take.
  std::vector<Edge> all_work_edges() const;

  // Its slots: the distinct actions of its teams, in the order of each one's first team.
  std::vector<ActionSlot> slots() const;
  // This configuration with the binding's names in place of its slots' (configuration_binding.cpp).
  // Teams, helpers, edges and the helpers' variables stay as they are: a slot keeps its place and
  // the variables its helpers carry, whatever its action is called. An optional slot left unbound
  // drops its teams, their work and thread edges, and turns a mover_unpacker_splitter that fed only
  // them into a mover_unpacker. Throws korch::Error naming the configuration, the slot and the fix
  // for an unknown slot, more names than slots, a slot bound twice, an empty name, one name bound to
  // two slots (they are separate steps: each would apply it), and a required slot left unbound.
  Configuration bind_actions(const ActionBinding& binding) const;

  const TeamConfig* find_team(const std::string& name) const noexcept;
  const HelperConfig* find_helper(const std::string& name) const noexcept;
};

// What a configuration must fit into (the Runtime's fixed teams and helper teams).
struct RuntimeShape {
  unsigned n_teams = 0;
  unsigned threads_per_team = 0;
  unsigned n_helpers = 0;
  unsigned helper_threads = 0;
};

// The thin scheduler's checks (throws korch::Error naming the team, helper or edge): names unique
// and known; data types match along every edge (or a splitter/aggregator sits between); the
// distributor feeds only tile/block/action_metadata entries; no self-loops or cycles; one work
// subscriber per node, but a router has two (its "to", no work edge out) and a fraction in [0, 1];
// helpers have exactly one publisher; aggregators receive complete blocks;
// every packet comes back to the grid (ends in an unpacker); teams and threads fit the shape; thread
// budgets fit team sizes (Req ThreadBalance); with a bundle: every team's action is in it, every
// routine is used, and the bundle has no more routines than the runtime has teams.
void validate(const Configuration& configuration, const RuntimeShape& shape, const Bundle* bundle = nullptr);

// The most threads team `team` can have active in one cycle: its initial threads plus everything
// its thread publishers can hand on (transitively).
unsigned max_active_threads(const Configuration& configuration, const std::string& team);

}  // namespace korch
