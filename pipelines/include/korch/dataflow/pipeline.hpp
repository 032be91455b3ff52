// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Pipelines: a compiled dataflow graph running the MERCATOR firing protocol inside one
// Kokkos kernel. Every league member of a Kokkos::TeamPolicy runs one complete pipeline instance
// (its queues, parent buffers and scheduler state live in Views indexed by league rank). One boss
// lane (Kokkos::single(PerTeam)) updates the scheduling state; the lanes of the team are the
// vector: a run processes up to `vector_width` items, one per lane, and a team scan places the
// outputs. Instances claim input chunks with an atomic counter; sinks gather with one.
//
//   dataflow::Options opt;  opt.vector_width = 64;
//   auto pipe = dataflow::make_pipeline<Kokkos::DefaultExecutionSpace>(g, opt);
//   dataflow::RunStats stats = pipe.run();
//   auto out = pipe.output<int>("yes");                          // values + instance of each
//
// This header is the host driver: it chooses the shape (vector width, team size, instances),
// lays out one instance's state, allocates every instance's, launches the kernel
// (pipeline_kernel.hpp) and reads back statistics, errors and sink outputs.
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/error_bits.hpp>
#include <korch/dataflow/graph.hpp>
#include <korch/dataflow/options.hpp>
#include <korch/dataflow/pipeline_kernel.hpp>
#include <korch/dataflow/queue.hpp>
#include <korch/dataflow/signal.hpp>
#include <korch/dataflow/stats.hpp>
#include <korch/device_tuple.hpp>
#include <korch/error.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace korch::dataflow {

template <class T>
struct SinkOutput {
  std::vector<T> values;
  std::vector<int> instance;  // the pipeline instance (league rank) that produced each value
};

namespace detail {

// The smallest power of two >= n (n >= 1).
inline int next_power_of_two(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

inline std::size_t align64(std::size_t x) { return (x + 63) / 64 * 64; }

// The graph's nodes (a std::tuple) as the kernel's device tuple.
template <class... Nodes, std::size_t... I>
korch::detail::DeviceTuple<Nodes...> to_device_tuple(const std::tuple<Nodes...>& t, std::index_sequence<I...>) {
  return korch::detail::DeviceTuple<Nodes...>(std::get<I>(t)...);
}

}  // namespace detail

template <class ExecSpace, class... Nodes>
class Pipeline {
 public:
  using exec_space = ExecSpace;
  using kernel_type = detail::PipelineKernel<ExecSpace, Nodes...>;
  static constexpr int N = sizeof...(Nodes);
  // whether the host can reach the space's memory (host spaces: one-lane teams, global memory)
  static constexpr bool host_space =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename ExecSpace::memory_space>::accessible;

  Pipeline(const Graph<Nodes...>& graph, Options options = {})
      : graph_(graph.compile()),
        options_(options),
        k_(detail::to_device_tuple(graph.nodes(), std::index_sequence_for<Nodes...>{})) {
    static_assert(sizeof...(Nodes) > 0, "a pipeline needs at least a source");
    choose_shape(options);
    // int state layout: globals, scheduler stack, node fields, queue fields, open parent slots
    int ints = detail::G_FIELDS;
    k_.stack_off = ints;
    ints += N;
    k_.node_off = ints;
    ints += N * detail::N_FIELDS;
    k_.queue_off = ints;
    ints += N * Q_FIELDS;
    k_.open_off = ints;
    ints += N * 32;
    // byte arena layout: node buffers, then queues
    std::size_t bytes = 0;
    const SinkSizes sinks = lay_out_nodes(ints, bytes);
    lay_out_queues(bytes);
    if (bytes > static_cast<std::size_t>(INT_MAX))
      throw Error::format(
          "dataflow pipeline '{}': one instance needs {} bytes of queues: lower "
          "the vector width or the queue scale",
          graph_.name, bytes);
    ints = (ints + 15) / 16 * 16;
    k_.ints_per_instance = ints;
    k_.bytes_per_instance = static_cast<long long>(bytes);
    choose_instance_memory();
    allocate(sinks);
  }

  // Runs the pipeline over the whole input (blocks until done). Throws korch::Error when a debug
  // check failed inside the kernel.
  RunStats run() {
    Kokkos::deep_copy(k_.errors, 0);
    Kokkos::deep_copy(k_.counters, 0ULL);
    Kokkos::deep_copy(k_.sig_counts, 0ULL);
    Kokkos::fence();
    const auto t0 = std::chrono::steady_clock::now();
    launch();
    Kokkos::fence();
    const auto t1 = std::chrono::steady_clock::now();
    auto err = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), k_.errors);
    auto cnt = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), k_.counters);
    counts_.assign(sink_names_.size(), 0);
    for (std::size_t s = 0; s < sink_names_.size(); ++s) counts_[s] = cnt(1 + s);
    auto sig = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), k_.sig_counts);
    sig_counts_.assign(sink_names_.size(), 0);
    for (std::size_t s = 0; s < sink_names_.size(); ++s) sig_counts_[s] = sig(s);
    if (err(0) != 0) throw make_error(err(0), err(1));
    RunStats st;
    st.seconds = std::chrono::duration<double>(t1 - t0).count();
    st.instances = instances_;
    st.vector_width = W_;
    st.input_items = k_.n_input;
    st.team_scratch = k_.in_scratch;
    st.registers_capped = registers_capped();
    st.nodes = node_stats();
    return st;
  }

  // What sink `name` gathered in the last run, with the producing instance of each item (items
  // of one instance are in that instance's order).
  template <class T>
  SinkOutput<T> output(const std::string& name) const {
    const int i = graph_.index_of(name);
    if (i < 0 || graph_.nodes[i].kind != NodeKind::Sink)
      throw Error::format("dataflow pipeline '{}': no sink named '{}'", graph_.name, name);
    if (graph_.nodes[i].input_type != typeid(T))
      throw Error::format("dataflow pipeline '{}': sink '{}' holds {}, not {}", graph_.name, name,
                          graph_.nodes[i].input_type.name(), typeid(T).name());
    const int s = k_.nd[i].sink;
    const std::size_t n = counts_.empty() ? 0 : static_cast<std::size_t>(counts_[s]);
    SinkOutput<T> out;
    out.values.resize(n);
    out.instance.resize(n);
    if (n == 0) return out;
    auto bytes =
        Kokkos::subview(k_.sink_bytes, std::make_pair(static_cast<std::size_t>(k_.sink_off[s]),
                                                      static_cast<std::size_t>(k_.sink_off[s]) + n * sizeof(T)));
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bytes);
    std::memcpy(static_cast<void*>(out.values.data()), hb.data(), n * sizeof(T));
    auto orig = Kokkos::subview(k_.sink_origins, std::make_pair(static_cast<std::size_t>(k_.sink_origin_off[s]),
                                                                static_cast<std::size_t>(k_.sink_origin_off[s]) + n));
    auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), orig);
    for (std::size_t k = 0; k < n; ++k) out.instance[k] = ho(k);
    return out;
  }

  // How many user signals reached sink `name` in the last run.
  unsigned long long signal_count(const std::string& name) const {
    const int s = k_.nd[sink_index(name)].sink;
    return sig_counts_.empty() ? 0 : sig_counts_[s];
  }
  // The user signals that reached sink `name` in the last run (Options::signal_log of them at
  // most), each with its instance and the number of items the sink had from that instance before
  // it; in arrival order within an instance.
  std::vector<SignalRecord> signals(const std::string& name) const {
    const int s = k_.nd[sink_index(name)].sink;
    const std::size_t n = sig_counts_.empty() ? 0
                                              : static_cast<std::size_t>(std::min<unsigned long long>(
                                                    sig_counts_[s], static_cast<unsigned long long>(k_.sig_log_cap)));
    std::vector<SignalRecord> out(n);
    if (n == 0) return out;
    const std::size_t first = static_cast<std::size_t>(s) * k_.sig_log_cap;
    auto rec = Kokkos::subview(k_.sig_log, std::make_pair(first, first + n));
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rec);
    for (std::size_t k = 0; k < n; ++k) out[k] = h(k);
    return out;
  }

  const CompiledGraph& graph() const { return graph_; }
  int vector_width() const { return W_; }
  int instances() const { return instances_; }
  int team_size() const { return team_; }
  // whether each instance keeps its state in team scratch memory (Options::instance_memory)
  bool team_scratch() const { return k_.in_scratch; }
  // bytes of one instance's state: queues and buffers, ints, statistics
  long long instance_bytes() const { return k_.scratch_bytes; }
  // capacity of the data queue in front of node `name`
  int queue_capacity(const std::string& name) const {
    const int i = graph_.index_of(name);
    if (i <= 0) throw Error::format("dataflow pipeline '{}': no queue in front of '{}'", graph_.name, name);
    return caps_[i];
  }

 private:
  int sink_index(const std::string& name) const {
    const int i = graph_.index_of(name);
    if (i < 0 || graph_.nodes[i].kind != NodeKind::Sink)
      throw Error::format("dataflow pipeline '{}': no sink named '{}': name a sink of the graph", graph_.name, name);
    return i;
  }

  // The team scratch layout of one instance (arena, ints, statistics, wide scratch), and where the
  // instances keep their state: team scratch when Options::instance_memory asks for it, or when it
  // is automatic, the space is a GPU's and one instance fits the space's level-0 scratch.
  void choose_instance_memory() {
    long long off = k_.bytes_per_instance;
    k_.scratch_state_off = off;
    off += static_cast<long long>(detail::align64(static_cast<std::size_t>(k_.ints_per_instance) * sizeof(int)));
    k_.scratch_stats_off = off;
    off += static_cast<long long>(detail::align64(N * detail::ST_FIELDS * sizeof(long long)));
    k_.scratch_wide_off = off;
    k_.scratch_bytes = off + 8 * static_cast<long long>(sizeof(long long));
    const typename kernel_type::policy probe(1, team_);
    const long long limit = probe.scratch_size_max(0);
    const bool fits = scratch_request() <= limit;
    switch (options_.instance_memory) {
      case InstanceMemory::automatic: k_.in_scratch = !host_space && fits; break;
      case InstanceMemory::global: k_.in_scratch = false; break;
      case InstanceMemory::team_scratch:
        if (!fits)
          throw Error::format(
              "dataflow pipeline '{}': one instance needs {} bytes of team scratch memory but {} gives a team at "
              "most {}: use InstanceMemory::global or automatic, or lower the vector width or the queue scale",
              graph_.name, scratch_request(), ExecSpace::name(), limit);
        k_.in_scratch = true;
        break;
    }
  }
  // Launches the kernel over every instance. With Options::cap_registers on a GPU space, under
  // launch bounds of 1024 lanes and one team per multiprocessor, from which nvcc and hipcc allot at
  // most 64 registers per lane (docs/dataflow.md, "The run's shape"); host spaces have one launch.
  void launch() {
    if constexpr (!host_space) {
      if (options_.cap_registers) {
        launch_with(
            Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<1024, 1>, ConcurrentLaunchHint>(instances_, team_));
        return;
      }
    }
    launch_with(typename kernel_type::policy(instances_, team_));
  }
  bool registers_capped() const { return options_.cap_registers && !host_space; }
  template <class Policy>
  void launch_with(Policy policy) {
    if (k_.in_scratch) policy.set_scratch_size(0, Kokkos::PerTeam(scratch_request()));
    Kokkos::parallel_for("korch::dataflow::" + graph_.name, policy, k_);
  }

  // The team scratch a team asks for: the instance's block and room to align it to 64 bytes.
  long long scratch_request() const { return k_.scratch_bytes + 64; }

  // Totals of the sink arenas: bytes of items, ints of origins.
  struct SinkSizes {
    long long bytes = 0;
    long long ints = 0;
    int count = 0;
  };

  // Vector width, team size, instances, input size and chunk from the options and the space.
  void choose_shape(const Options& options) {
    const std::string& name = graph_.name;
    int W = options.vector_width > 0 ? options.vector_width : (host_space ? 64 : 128);
    if (W > 1024)
      throw Error::format(
          "dataflow pipeline '{}': vector width {} is above 1024: use a smaller "
          "width",
          name, W);
    // On GPUs a team is one lane per item of a run, rounded up to a power of two: the team scan
    // that places a run's outputs needs a power-of-two block (Kokkos' CUDA and HIP scans).
    int team = options.team_size > 0 ? options.team_size : (host_space ? 1 : detail::next_power_of_two(W));
    if (!host_space && (team & (team - 1)) != 0)
      throw Error::format(
          "dataflow pipeline '{}': team size {} on {}: a GPU team's scan needs a power "
          "of two: use {} (or 0 for the default)",
          name, team, ExecSpace::name(), detail::next_power_of_two(team));
    if (options.queue_scale < 1.0)
      throw Error::format(
          "dataflow pipeline '{}': queue scale factor {} is below the minimum 1 "
          "(a queue must hold one upstream run plus a consumer vector): use >= 1",
          name, options.queue_scale);
    int instances = options.instances;
    if (instances <= 0) {
      const int conc = static_cast<int>(ExecSpace().concurrency());
      instances = host_space ? std::max(1, conc) : std::max(1, conc / team);
    }
    const long long n_input = static_cast<long long>(graph_.nodes[0].sink_capacity);
    if (n_input > INT_MAX / 2)
      throw Error::format(
          "dataflow pipeline '{}': source '{}' has {} items, more than {} per "
          "run: split the input",
          name, graph_.nodes[0].name, n_input, INT_MAX / 2);
    W_ = W;
    team_ = team;
    instances_ = instances;
    k_.W = W;
    k_.n_input = n_input;
    k_.chunk = options.chunk > 0 ? options.chunk : 8 * W;
    for (int r = 0; r < 32; ++r) k_.region_head[r] = 0;
    for (const Region& r : graph_.regions) k_.region_head[r.number] = r.head;
  }

  // Each node's description: its place in the graph and its buffers (map stages and counts,
  // enumerate parent buffer and reference counts, aggregate accumulator, sink arena).
  SinkSizes lay_out_nodes(int& ints, std::size_t& bytes) {
    const int W = W_;
    SinkSizes sinks;
    int n_sinks = 0;
    for (int i = 0; i < N; ++i) {
      const NodeSpec& s = graph_.nodes[i];
      auto& d = k_.nd[i];
      d.kind = static_cast<int>(s.kind);
      d.parent = graph_.parent[i];
      d.label = graph_.label[i];
      d.heads = graph_.heads[i];
      d.n_channels = static_cast<int>(s.channels.size());
      for (int c = 0; c < d.n_channels; ++c) d.child[c] = graph_.children[i][c];
      d.terminates = graph_.terminates[i];
      if (s.kind == NodeKind::Aggregate) d.closes = graph_.heads[graph_.index_of(s.closes)];
      if (s.kind == NodeKind::Map) {
        // a node whose lanes place their outputs from registers stages nothing on multi-lane
        // teams as wide as a run (MapNode::lanes_scanned)
        const bool staged = !(s.places_from_registers && team_ > 1 && team_ >= W);
        for (int c = 0; c < d.n_channels; ++c) {
          d.stage_off[c] = static_cast<int>(bytes);
          if (staged)
            bytes = detail::align64(bytes + static_cast<std::size_t>(W) * s.max_outputs[c] * s.channel_sizes[c]);
          d.counts_off[c] = ints;
          ints += W + 1;
        }
      }
      if (s.kind == NodeKind::Map && s.raises > 0) {
        d.raises = s.raises;
        d.raise_off = static_cast<int>(bytes);
        bytes = detail::align64(bytes + static_cast<std::size_t>(W) * s.raises * s.raise_record_size);
        d.raised_off = ints;
        ints += W;
      }
      if (s.kind == NodeKind::Enumerate) {
        if (s.parent_buffer < 1)
          throw Error::format(
              "dataflow graph '{}': enumerate node '{}' has a parent buffer of {} "
              "slots: use at least 1",
              graph_.name, s.name, s.parent_buffer);
        d.arena_off = static_cast<int>(bytes);
        bytes = detail::align64(bytes + static_cast<std::size_t>(s.parent_buffer) * s.parent_size);
        d.buffer_slots = s.parent_buffer;
        d.refcount_off = ints;
        ints += s.parent_buffer;
        d.terminals = static_cast<int>(graph_.regions[graph_.heads[i]].terminals.size());
      }
      if (s.kind == NodeKind::Aggregate) {
        d.arena_off = static_cast<int>(bytes);
        bytes = detail::align64(bytes + s.state_size);
      }
      if (s.kind == NodeKind::Sink) {
        d.sink = n_sinks;
        ++sinks.count;
        k_.sink_off[n_sinks] = sinks.bytes;
        k_.sink_origin_off[n_sinks] = sinks.ints;
        k_.sink_cap[n_sinks] = static_cast<long long>(s.sink_capacity);
        sinks.bytes += static_cast<long long>(detail::align64(s.sink_capacity * s.input_size));
        sinks.ints += static_cast<long long>(s.sink_capacity);
        sink_names_.push_back(i);
        ++n_sinks;
      }
    }
    return sinks;
  }

  // The most user signals node p raises in one run besides those it forwards: `raises` per output
  // of a map, source or enumerate run; per parent closed at once for an aggregate (its own region
  // and those nested in it that it terminates).
  int raised_per_run(int p) const {
    const NodeSpec& ps = graph_.nodes[p];
    if (ps.kind != NodeKind::Aggregate) return W_ * ps.raises;
    int closed = 0;
    for (unsigned t = graph_.terminates[p]; t != 0; t &= t - 1) ++closed;
    return closed * ps.raises;
  }

  // Queues: capacity from the producer's largest run, the scale factor and the consumer's width.
  void lay_out_queues(std::size_t& bytes) {
    const int W = W_;
    caps_.assign(N, 0);
    for (int c = 1; c < N; ++c) {
      const int p = graph_.parent[c];
      const NodeSpec& ps = graph_.nodes[p];
      int per_run = W;  // source and enumerate: one vector of items per run
      if (ps.kind == NodeKind::Map) per_run = W * ps.max_outputs[graph_.parent_channel[c]];
      if (ps.kind == NodeKind::Aggregate) per_run = 1;  // one output per consumed signal
      const int input_width = graph_.nodes[c].kind == NodeKind::Enumerate ? 1 : W;
      auto& q = k_.qd[c];
      q.full_margin = per_run;
      q.input_width = input_width;
      q.cap = static_cast<int>(std::ceil(options_.queue_scale * per_run)) + input_width - 1;
      q.sig_margin = SIGNAL_FULL_MARGIN + raised_per_run(p);
      q.sig_cap = static_cast<int>(std::ceil(options_.queue_scale * q.sig_margin));
      // one-lane teams write a producer run contiguously past the tail (see wrap_overhang)
      q.overhang = team_ == 1 ? per_run : 0;
      q.data_off = static_cast<int>(bytes);
      bytes = detail::align64(bytes + static_cast<std::size_t>(q.cap + q.overhang) * graph_.nodes[c].input_size);
      q.sig_off = static_cast<int>(bytes);
      bytes = detail::align64(bytes + static_cast<std::size_t>(q.sig_cap) * sizeof(Signal));
      q.state_off = k_.queue_off + c * Q_FIELDS;
      caps_[c] = q.cap;
    }
  }

  // The Views of all instances (state and queues uninitialized: the kernel sets them up).
  void allocate(const SinkSizes& sinks) {
    const std::string& name = graph_.name;
    const int instances = instances_;
    const std::size_t bytes = static_cast<std::size_t>(k_.bytes_per_instance);
    const std::string prefix = std::string("korch::dataflow::") + name;
    // instances in team scratch need no rows of state and queues
    const bool rows = !k_.in_scratch;
    k_.state = decltype(k_.state)(Kokkos::view_alloc(prefix + "::state", Kokkos::WithoutInitializing), instances,
                                  rows ? k_.ints_per_instance : 0);
    k_.arena = decltype(k_.arena)(Kokkos::view_alloc(prefix + "::queues", Kokkos::WithoutInitializing),
                                  rows ? static_cast<std::size_t>(instances) * bytes + 64 : 0);
    k_.stats = decltype(k_.stats)("korch::dataflow::stats", instances, N * detail::ST_FIELDS);
    k_.wide = decltype(k_.wide)("korch::dataflow::wide", instances, 8);
    k_.errors = decltype(k_.errors)("korch::dataflow::errors", 2);
    k_.counters = decltype(k_.counters)("korch::dataflow::counters", 1 + N);
    k_.sink_bytes = decltype(k_.sink_bytes)(Kokkos::view_alloc("korch::dataflow::sinks", Kokkos::WithoutInitializing),
                                            static_cast<std::size_t>(sinks.bytes) + 64);
    k_.sink_origins =
        decltype(k_.sink_origins)(Kokkos::view_alloc("korch::dataflow::origins", Kokkos::WithoutInitializing),
                                  static_cast<std::size_t>(sinks.ints) + 1);
    if (options_.signal_log < 0)
      throw Error::format("dataflow pipeline '{}': signal log of {} records per sink: use >= 0", name,
                          options_.signal_log);
    k_.sig_log_cap = options_.signal_log;
    k_.sig_counts = decltype(k_.sig_counts)("korch::dataflow::signal_counts", std::max(1, sinks.count));
    k_.sig_log = decltype(k_.sig_log)(Kokkos::view_alloc(prefix + "::signal_log", Kokkos::WithoutInitializing),
                                      static_cast<std::size_t>(std::max(1, sinks.count)) * options_.signal_log + 1);
  }

  // Per node statistics of the last run, summed over instances.
  std::vector<NodeStats> node_stats() const {
    std::vector<NodeStats> out;
    auto stats = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), k_.stats);
    for (int i = 0; i < N; ++i) {
      NodeStats ns;
      ns.name = graph_.nodes[i].name;
      ns.kind = graph_.nodes[i].kind;
      for (int r = 0; r < instances_; ++r) {
        ns.firings += stats(r, i * detail::ST_FIELDS + detail::ST_FIRINGS);
        ns.runs += stats(r, i * detail::ST_FIELDS + detail::ST_RUNS);
        ns.lanes += stats(r, i * detail::ST_FIELDS + detail::ST_LANES);
        ns.signals += stats(r, i * detail::ST_FIELDS + detail::ST_SIGNALS);
        ns.flushes += stats(r, i * detail::ST_FIELDS + detail::ST_FLUSHES);
        ns.blocks += stats(r, i * detail::ST_FIELDS + detail::ST_BLOCKS);
      }
      ns.utilization = ns.runs > 0 ? static_cast<double>(ns.lanes) / (static_cast<double>(ns.runs) * W_) : 0.0;
      out.push_back(ns);
    }
    return out;
  }

  Error make_error(int bits, int node) const {
    const std::string who = node >= 0 && node < N ? graph_.nodes[node].name : "?";
    return Error::format("dataflow pipeline '{}': debug check failed at node '{}': {}", graph_.name, who,
                         detail::describe_error_bits(bits));
  }

  CompiledGraph graph_;
  Options options_;
  kernel_type k_;
  int W_ = 1, team_ = 1, instances_ = 1;
  std::vector<int> caps_;
  std::vector<int> sink_names_;
  std::vector<unsigned long long> counts_;
  std::vector<unsigned long long> sig_counts_;
};

template <class ExecSpace = DeviceExecSpace, class... Nodes>
Pipeline<ExecSpace, Nodes...> make_pipeline(const Graph<Nodes...>& graph, Options options = {}) {
  return Pipeline<ExecSpace, Nodes...>(graph, options);
}

}  // namespace korch::dataflow
