// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The graph builder: a dataflow graph is built in C++ (no spec language) by chaining calls; each
// call returns a graph whose type lists one more node, so that the pipeline can dispatch to node
// types statically inside the kernel.
//
//   auto g = dataflow::graph("filters")
//                .source("in", dataflow::from_view(input))
//                .node("keep3", KeepMultiples{3}, "in")
//                .node("route", Route{}, "keep3", {"accept", "reject"})
//                .sink<int>("yes", "route.accept", n)
//                .sink<int>("no", "route.reject", n);
#pragma once

#include <korch/dataflow/aggregate_node.hpp>
#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/enumerate_node.hpp>
#include <korch/dataflow/map_node.hpp>
#include <korch/dataflow/node.hpp>
#include <korch/dataflow/sink_node.hpp>
#include <korch/dataflow/source_node.hpp>
#include <korch/error.hpp>

#include <string>
#include <tuple>
#include <type_traits>
#include <typeindex>
#include <utility>
#include <vector>

namespace korch::dataflow {

namespace detail {
template <class T>
void check_item_type() {
  static_assert(std::is_trivially_copyable_v<T>,
                "dataflow items must be trivially copyable (they are copied into queues)");
}
template <class... Os>
void add_channels(NodeSpec& s, Outputs<Os...>) {
  (check_item_type<typename Os::type>(), ...);
  (s.channel_types.emplace_back(typeid(typename Os::type)), ...);
  (s.channel_sizes.push_back(sizeof(typename Os::type)), ...);
  (s.max_outputs.push_back(Os::max), ...);
}
}  // namespace detail

template <class... Nodes>
class Graph {
 public:
  explicit Graph(std::string name) : name_(std::move(name)) {}
  Graph(std::string name, std::tuple<Nodes...> nodes, std::vector<NodeSpec> specs)
      : name_(std::move(name)), nodes_(std::move(nodes)), specs_(std::move(specs)) {}

  const std::string& name() const { return name_; }
  const std::tuple<Nodes...>& nodes() const { return nodes_; }
  const std::vector<NodeSpec>& specs() const { return specs_; }

  // The source: an ArraySource (from_view) or a GeneratorSource (generate<T>(n, fn)).
  template <class Src>
  Graph<Nodes..., SourceNode<Src>> source(std::string name, Src src) const {
    using T = typename Src::value_type;
    detail::check_item_type<T>();
    NodeSpec s;
    s.name = std::move(name);
    s.kind = NodeKind::Source;
    s.channels = {"out"};
    s.channel_types = {typeid(T)};
    s.channel_sizes = {sizeof(T)};
    s.max_outputs = {1};
    s.sink_capacity = static_cast<std::size_t>(src.size());
    s.raises = SourceNode<Src>::raises;
    static_assert(SourceNode<Src>::raises >= 0, "Src::raises is the most user signals raised per item");
    return add(SourceNode<Src>{{}, src}, std::move(s));
  }

  // A node: fn(input, emit) emits 0..K items per input on each channel of F::outputs.
  // `from` is "node" or "node.channel". Channel names default to "out" (one channel) or
  // "out0", "out1", ...
  template <class F>
  Graph<Nodes..., MapNode<F>> node(std::string name, F fn, std::string from,
                                   std::vector<std::string> channels = {}) const {
    using In = typename F::input_type;
    detail::check_item_type<In>();
    NodeSpec s;
    s.name = std::move(name);
    s.kind = NodeKind::Map;
    s.from = std::move(from);
    detail::add_channels(s, typename F::outputs{});
    fill_channel_names(s, std::move(channels));
    s.input_type = typeid(In);
    s.input_size = sizeof(In);
    s.raises = MapNode<F>::raises;
    static_assert(MapNode<F>::raises >= 0, "F::raises is the most user signals raised per input");
    s.raise_record_size = sizeof(typename MapNode<F>::raised_type);
    s.places_from_registers = MapNode<F>::in_registers;
    return add(MapNode<F>{{}, fn}, std::move(s));
  }

  // An enumerate node: each parent becomes fn.count(parent) elements fn.element(parent, i);
  // parents are held by value in a buffer of `parent_buffer` slots while their region is open.
  template <class E>
  Graph<Nodes..., EnumerateNode<E>> enumerate(std::string name, E fn, std::string from, int parent_buffer = 16) const {
    using P = typename E::parent_type;
    using T = typename E::element_type;
    detail::check_item_type<P>();
    detail::check_item_type<T>();
    NodeSpec s;
    s.name = std::move(name);
    s.kind = NodeKind::Enumerate;
    s.from = std::move(from);
    s.channels = {"out"};
    s.channel_types = {typeid(T)};
    s.channel_sizes = {sizeof(T)};
    s.max_outputs = {1};
    s.input_type = typeid(P);
    s.input_size = sizeof(P);
    s.parent_type = typeid(P);
    s.parent_size = sizeof(P);
    s.parent_buffer = parent_buffer;
    s.raises = EnumerateNode<E>::raises;
    static_assert(EnumerateNode<E>::raises >= 0, "E::raises is the most user signals raised per element");
    return add(EnumerateNode<E>{{}, fn}, std::move(s));
  }

  // An aggregate node closing the region of enumerate node `closes`: one output per parent.
  template <class A>
  Graph<Nodes..., AggregateNode<A>> aggregate(std::string name, A fn, std::string from, std::string closes) const {
    using In = typename A::input_type;
    using Out = typename A::output_type;
    detail::check_item_type<In>();
    detail::check_item_type<Out>();
    detail::check_item_type<typename A::parent_type>();
    detail::check_item_type<typename A::accumulator_type>();
    NodeSpec s;
    s.name = std::move(name);
    s.kind = NodeKind::Aggregate;
    s.from = std::move(from);
    s.channels = {"out"};
    s.channel_types = {typeid(Out)};
    s.channel_sizes = {sizeof(Out)};
    s.max_outputs = {1};
    s.input_type = typeid(In);
    s.input_size = sizeof(In);
    s.parent_type = typeid(typename A::parent_type);
    s.parent_size = sizeof(typename A::parent_type);
    s.state_size = sizeof(typename A::accumulator_type);
    s.closes = std::move(closes);
    s.raises = AggregateNode<A>::raises;
    static_assert(AggregateNode<A>::raises >= 0, "A::raises is the most user signals raised per parent");
    return add(AggregateNode<A>{{}, fn}, std::move(s));
  }

  // A sink gathering up to `capacity` items of type T (more is reported as an error).
  template <class T>
  Graph<Nodes..., SinkNode<T>> sink(std::string name, std::string from, std::size_t capacity) const {
    detail::check_item_type<T>();
    NodeSpec s;
    s.name = std::move(name);
    s.kind = NodeKind::Sink;
    s.from = std::move(from);
    s.input_type = typeid(T);
    s.input_size = sizeof(T);
    s.sink_capacity = capacity;
    return add(SinkNode<T>{}, std::move(s));
  }

  // Checks the graph and computes its regions (throws korch::Error).
  CompiledGraph compile() const { return compile_graph(name_, specs_); }

 private:
  static void fill_channel_names(NodeSpec& s, std::vector<std::string> names) {
    if (names.empty()) {
      if (s.channel_types.size() == 1) {
        names = {"out"};
      } else {
        for (std::size_t c = 0; c < s.channel_types.size(); ++c) names.push_back("out" + std::to_string(c));
      }
    }
    if (names.size() != s.channel_types.size())
      throw Error::format(
          "dataflow node '{}': {} channel names given for {} declared outputs: "
          "name every channel",
          s.name, names.size(), s.channel_types.size());
    s.channels = std::move(names);
  }

  template <class N>
  Graph<Nodes..., N> add(N node, NodeSpec spec) const {
    std::vector<NodeSpec> specs = specs_;
    specs.push_back(std::move(spec));
    return Graph<Nodes..., N>(name_, std::tuple_cat(nodes_, std::make_tuple(std::move(node))), std::move(specs));
  }

  std::string name_;
  std::tuple<Nodes...> nodes_;
  std::vector<NodeSpec> specs_;
};

inline Graph<> graph(std::string name) { return Graph<>(std::move(name)); }

}  // namespace korch::dataflow
