// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The dataflow graph compiler (host code): checks a graph's topology and types, computes the
// regions of enumerate nodes, numbers them by the design's two rules and labels every node.
#pragma once

#include <cstdint>
#include <string>
#include <typeindex>
#include <vector>

namespace korch::dataflow {

enum class NodeKind : int { Source = 0, Map = 1, Enumerate = 2, Aggregate = 3, Sink = 4 };

const char* to_string(NodeKind kind);

// What the graph builder records about one node (types as type_index, so the compiler can check
// that every edge joins an output channel to an input of the same type).
struct NodeSpec {
  std::string name;
  NodeKind kind = NodeKind::Map;
  std::string from;                            // "node" or "node.channel"; empty for the source
  std::vector<std::string> channels;           // output channel names
  std::vector<std::type_index> channel_types;  // per channel
  std::vector<int> max_outputs;                // per channel: most outputs per input (Map)
  std::type_index input_type = typeid(void);
  std::type_index parent_type = typeid(void);  // Enumerate, Aggregate
  std::string closes;                          // Aggregate: enumerate node whose region it ends
  int parent_buffer = 0;                       // Enumerate: parent buffer slots
  std::size_t sink_capacity = 0;               // Sink
  // sizes for the memory layout
  std::vector<std::size_t> channel_sizes;  // sizeof each channel's item type
  std::size_t input_size = 0;
  std::size_t parent_size = 0;         // Enumerate
  std::size_t state_size = 0;          // Aggregate: sizeof accumulator
  int raises = 0;                      // most user signals raised per input, item, element or parent
  std::size_t raise_record_size = 0;   // Map: sizeof the staged record of one raised signal
  bool places_from_registers = false;  // Map: no staging on a multi-lane team as wide as a run
};

// A region: the connected part of the graph headed by an enumerate node (or, for region 0, the
// whole graph headed by the source). Members are the nodes reachable from the head that do not
// lie beyond a terminal node; terminal nodes are the aggregates that close the region and the
// sinks reached inside it.
struct Region {
  int number = 0;
  int head = 0;
  std::string name;  // the head's name
  std::vector<int> members;
  std::vector<int> terminals;
};

inline constexpr int max_regions = 31;  // region numbers index a 32-bit mask

struct CompiledGraph {
  std::string name;
  std::vector<NodeSpec> nodes;             // in builder order (a topological order)
  std::vector<int> parent;                 // upstream node (-1 for the source)
  std::vector<int> parent_channel;         // channel of the upstream node feeding this node
  std::vector<std::vector<int>> children;  // per node, per output channel: the downstream node
  std::vector<int> label;                  // highest-numbered region the node belongs to
  std::vector<int> heads;                  // region number a node heads, or -1
  std::vector<std::uint32_t> terminates;   // bit r set: node is a terminal of region r
  std::vector<Region> regions;             // indexed by region number; regions[0] = whole graph

  int index_of(const std::string& node) const;  // -1 if absent
  std::string describe() const;                 // one line per region, for logs and demos
};

// Throws korch::Error naming the graph, the node and the fix for: duplicate or unknown names,
// a missing or second source, unconnected or doubly connected channels, type mismatches,
// aggregates closing a region they are not in, overlapping regions, too many regions.
CompiledGraph compile_graph(const std::string& name, const std::vector<NodeSpec>& nodes);

}  // namespace korch::dataflow
