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
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/graph.hpp>
#include <korch/dataflow/node.hpp>
#include <korch/dataflow/queue.hpp>
#include <korch/dataflow/signal.hpp>
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

struct Options {
  int vector_width = 0;       // items per run; 0: 64 on hosts, 128 on GPUs (= team size there)
  int instances = 0;          // pipeline instances (league size); 0: one per host thread / 4 per SM-ish
  double queue_scale = 4.0;   // data capacity = scale x (max output of one upstream run)
                              //                 + (consumer's run width - 1); minimum 1
  int chunk = 0;              // input items an instance claims at a time; 0: 8 x vector_width
  int team_size = 0;          // 0: 1 on host spaces, vector_width on GPUs
};

struct NodeStats {
  std::string name;
  NodeKind kind = NodeKind::Map;
  long long firings = 0;
  long long runs = 0;
  long long lanes = 0;    // items consumed (enumerate: elements produced) summed over runs
  long long signals = 0;  // signals consumed
  long long flushes = 0;  // flushes completed
  long long blocks = 0;   // times blocked on a full parent buffer (enumerate)
  double utilization = 0; // lanes / (runs x vector width)
};

struct RunStats {
  double seconds = 0;
  int instances = 0;
  int vector_width = 0;
  long long input_items = 0;
  std::vector<NodeStats> nodes;
  const NodeStats& node(const std::string& name) const {
    for (const auto& n : nodes)
      if (n.name == name) return n;
    throw Error::format("run statistics: no node named '{}'", name);
  }
  // items consumed / (runs x vector width) over all nodes of the given kind
  double utilization(NodeKind kind) const {
    long long lanes = 0, runs = 0;
    for (const auto& n : nodes)
      if (n.kind == kind) {
        lanes += n.lanes;
        runs += n.runs;
      }
    return runs > 0 ? static_cast<double>(lanes) / (static_cast<double>(runs) * vector_width) : 0;
  }
};

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

// A tuple that is usable inside device code (no std::get).
template <std::size_t I, class T>
struct Leaf {
  T value;
};
template <class Seq, class... T>
struct TupleImpl;
template <std::size_t... I, class... T>
struct TupleImpl<std::index_sequence<I...>, T...> : Leaf<I, T>... {
  TupleImpl() = default;
  explicit TupleImpl(const T&... v) : Leaf<I, T>{v}... {}
};
template <class... T>
using DTuple = TupleImpl<std::index_sequence_for<T...>, T...>;
template <std::size_t I, class T>
KOKKOS_INLINE_FUNCTION const T& dget(const Leaf<I, T>& l) {
  return l.value;
}

template <class... T>
constexpr int max_channels() {
  int m = 1;
  ((m = T::n_channels > m ? T::n_channels : m), ...);
  return m;
}

inline constexpr int NOT_FLUSHING = INT_MAX;

template <class T>
KOKKOS_INLINE_FUNCTION T imin(T a, T b) {
  return a < b ? a : b;
}

// Instance-global ints.
enum GlobalField : int {
  G_SP = 0,     // scheduler stack size
  G_CURRENT,    // node chosen by the boss
  G_PLAN0,      // run plan (double-buffered by run parity): items in the run, -1 = stop
  G_PLAN1,
  G_PREV_N,     // items of the run to commit
  G_SIGS_TO,    // signals to consume in this firing
  G_SC,         // signals consumed in this firing
  G_CREDIT,     // cached credit of the head signal
  G_ANYDS,      // some downstream node became active in this firing
  G_RUNS,       // runs in this firing
  G_STOP,       // instance stopped on an error
  G_FIELDS
};
// Per-node ints.
enum NodeField : int {
  N_ACTIVE = 0,
  N_BLOCKED,
  N_FLUSH,     // flushing status: lowest region whose flush is active; NOT_FLUSHING if none
  N_SCHED,     // on the scheduler stack
  N_HAS_CUR,   // enumerate: a parent is being enumerated; source: input exhausted
  N_SLOT,      // enumerate: its buffer slot
  N_NEXT,      // enumerate: next element; source: next input index
  N_CNT,       // enumerate: element count; source: end of the claimed chunk
  N_FIELDS
};
enum StatField : int { ST_FIRINGS = 0, ST_RUNS, ST_LANES, ST_SIGNALS, ST_FLUSHES, ST_BLOCKS, ST_FIELDS };

template <int C>
struct NodeDesc {
  int kind = 0;
  int parent = -1;
  int label = 0;       // region number
  int heads = -1;      // region number headed (enumerate)
  int closes = -1;     // region number closed (aggregate)
  int n_channels = 0;
  int child[C] = {};
  unsigned terminates = 0;
  int stage_off[C] = {};   // bytes (map: W*K items per channel)
  int counts_off[C] = {};  // ints (map: W+1 per channel)
  int arena_off = 0;       // bytes: enumerate parent buffer / aggregate accumulator
  int buffer_slots = 0;    // enumerate
  int refcount_off = 0;    // ints (enumerate: one per slot)
  int terminals = 0;       // enumerate: terminal nodes of its region
  int sink = -1;
};

struct Inst {
  char* arena;       // this instance's bytes
  int* state;        // this instance's ints
  long long* stats;  // this instance's statistics
  long long* wide;   // this instance's 64-bit scratch (sink base)
  int rank;
};

template <class Exec, class... Nodes>
class Machine {
 public:
  static constexpr int N = sizeof...(Nodes);
  static constexpr int C = max_channels<Nodes...>();
  using exec_space = Exec;
  using mem_space = typename Exec::memory_space;
  using policy = Kokkos::TeamPolicy<Exec>;
  using member_type = typename policy::member_type;

  explicit Machine(const DTuple<Nodes...>& n) : nodes(n) {}

  DTuple<Nodes...> nodes;
  Kokkos::Array<NodeDesc<C>, N> nd;
  Kokkos::Array<QueueDesc, N> qd;  // indexed by consumer node
  Kokkos::Array<int, 32> region_head;
  int W = 1;
  int stack_off = 0, node_off = 0, queue_off = 0, open_off = 0;
  int ints_per_instance = 0;
  long long bytes_per_instance = 0;
  long long n_input = 0;
  int chunk = 1;
  Kokkos::Array<long long, (N > 0 ? N : 1)> sink_off;       // byte offset in sink arena
  Kokkos::Array<long long, (N > 0 ? N : 1)> sink_origin_off;
  Kokkos::Array<long long, (N > 0 ? N : 1)> sink_cap;

  Kokkos::View<int**, Kokkos::LayoutRight, mem_space> state;
  Kokkos::View<char*, mem_space> arena;
  Kokkos::View<long long**, Kokkos::LayoutRight, mem_space> stats;
  Kokkos::View<long long**, Kokkos::LayoutRight, mem_space> wide;
  Kokkos::View<int*, mem_space> errors;                       // [0] bits, [1] node
  Kokkos::View<unsigned long long*, mem_space> counters;      // [0] input, [1+s] sink s
  Kokkos::View<char*, mem_space> sink_bytes;
  Kokkos::View<int*, mem_space> sink_origins;

  // --- accessors --------------------------------------------------------------------------
  KOKKOS_INLINE_FUNCTION int vector_width() const { return W; }
  KOKKOS_INLINE_FUNCTION const NodeDesc<C>& desc(int id) const { return nd[id]; }
  KOKKOS_INLINE_FUNCTION const QueueDesc& queue_desc(int c) const { return qd[c]; }
  // team_barrier, skipped for one-lane teams (host spaces)
  KOKKOS_INLINE_FUNCTION static void sync(const member_type& t) {
    if (t.team_size() > 1) t.team_barrier();
  }
  KOKKOS_INLINE_FUNCTION int& g(const Inst& in, int f) const { return in.state[f]; }
  KOKKOS_INLINE_FUNCTION int& ns(const Inst& in, int id, int f) const {
    return in.state[node_off + id * N_FIELDS + f];
  }
  KOKKOS_INLINE_FUNCTION int* qf(const Inst& in, int c) const { return in.state + qd[c].state_off; }
  template <class T>
  KOKKOS_INLINE_FUNCTION DataQueue<T> queue(const Inst& in, int c) const {
    return DataQueue<T>{reinterpret_cast<T*>(in.arena + qd[c].data_off), qd[c].cap, qf(in, c)};
  }
  KOKKOS_INLINE_FUNCTION SignalQueue signals(const Inst& in, int c) const {
    return SignalQueue{reinterpret_cast<Signal*>(in.arena + qd[c].sig_off), qd[c].sig_cap,
                       qf(in, c)};
  }
  KOKKOS_INLINE_FUNCTION int& open_slot(const Inst& in, int id, int region) const {
    return in.state[open_off + id * 32 + region];
  }
  KOKKOS_INLINE_FUNCTION int& refcount(const Inst& in, int head, int slot) const {
    return in.state[nd[head].refcount_off + slot];
  }
  template <class P>
  KOKKOS_INLINE_FUNCTION P& parent_at(const Inst& in, int region, int slot) const {
    return reinterpret_cast<P*>(in.arena + nd[region_head[region]].arena_off)[slot];
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION T* sink_data(int s) const {
    return reinterpret_cast<T*>(sink_bytes.data() + sink_off[s]);
  }
  KOKKOS_INLINE_FUNCTION int* sink_origin(int s) const {
    return sink_origins.data() + sink_origin_off[s];
  }
  KOKKOS_INLINE_FUNCTION long long sink_capacity(int s) const { return sink_cap[s]; }
  KOKKOS_INLINE_FUNCTION long long& stat(const Inst& in, int id, int f) const {
    return in.stats[id * ST_FIELDS + f];
  }
  KOKKOS_INLINE_FUNCTION void flag(int bits, int node) const {
    Kokkos::atomic_fetch_or(&errors(0), bits);
    errors(1) = node;
  }

  // --- scheduling (boss lane only) ---------------------------------------------------------
  KOKKOS_INLINE_FUNCTION bool flushing(const Inst& in, int id) const {
    return ns(in, id, N_FLUSH) <= nd[id].label;
  }
  KOKKOS_INLINE_FUNCTION bool fireable(const Inst& in, int x) const {
    if (!ns(in, x, N_ACTIVE) || ns(in, x, N_BLOCKED)) return false;
    for (int c = 0; c < nd[x].n_channels; ++c)
      if (ns(in, nd[x].child[c], N_ACTIVE)) return false;
    return true;
  }
  // Fireable nodes are put on the scheduler stack at most once.
  KOKKOS_INLINE_FUNCTION void check_push(const Inst& in, int x) const {
    if (x < 0 || ns(in, x, N_SCHED) || !fireable(in, x)) return;
    ns(in, x, N_SCHED) = 1;
    in.state[stack_off + g(in, G_SP)++] = x;
  }
  KOKKOS_INLINE_FUNCTION void activate(const Inst& in, int x) const {
    ns(in, x, N_ACTIVE) = 1;
    check_push(in, x);
  }
  // FULL: not enough room for the producer's largest run (data) or its signals.
  KOKKOS_INLINE_FUNCTION bool full(const Inst& in, int c) const {
    const int* q = qf(in, c);
    return qd[c].cap - q[Q_COUNT] < qd[c].full_margin ||
           qd[c].sig_cap - q[S_COUNT] < SIGNAL_FULL_MARGIN;
  }
  // The boss's plan for run `run` (n lanes, -1: stop firing), read by every lane after the barrier;
  // two slots alternate so that the next plan never overwrites one still being read. The run's
  // outputs are published at the start of the next run (G_PREV_N).
  KOKKOS_INLINE_FUNCTION void publish_plan(const Inst& in, int run, int n) const {
    g(in, G_PLAN0 + (run & 1)) = n;
    g(in, G_PREV_N) = n;
  }
  KOKKOS_INLINE_FUNCTION int planned_lanes(const Inst& in, int run) const { return in.state[G_PLAN0 + (run & 1)]; }
  // The bookkeeping of a finished run of n lanes (statistics for lane utilization).
  KOKKOS_INLINE_FUNCTION void count_run(const Inst& in, int id, int n) const {
    ++stat(in, id, ST_RUNS);
    ++g(in, G_RUNS);
    stat(in, id, ST_LANES) += n;
  }
  // A source-like node's finished run: its n outputs become items of `child`.
  KOKKOS_INLINE_FUNCTION void emit_run(const Inst& in, int id, int child, int n) const {
    add_items(in, child, n);
    ns(in, id, N_NEXT) += n;
    count_run(in, id, n);
  }
  KOKKOS_INLINE_FUNCTION void check_children_full(const Inst& in, int id) const {
    for (int c = 0; c < nd[id].n_channels; ++c) {
      const int ch = nd[id].child[c];
      if (full(in, ch)) {
        if (!ns(in, ch, N_ACTIVE)) activate(in, ch);
        g(in, G_ANYDS) = 1;
      }
    }
  }
  // A flush with status S propagates to the successors whose region number is >= S.
  KOKKOS_INLINE_FUNCTION void propagate_flush(const Inst& in, int id, int status) const {
    for (int c = 0; c < nd[id].n_channels; ++c) {
      const int ch = nd[id].child[c];
      if (nd[ch].label < status) continue;
      int& f = ns(in, ch, N_FLUSH);
      if (status < f) f = status;
      activate(in, ch);
    }
  }
  KOKKOS_INLINE_FUNCTION void after_firing(const Inst& in, int id) const {
    if (!ns(in, id, N_ACTIVE)) check_push(in, nd[id].parent);
    if (g(in, G_RUNS) == 0 && fireable(in, id)) {  // would loop forever: report, stop
      flag(E_STALL, id);
      g(in, G_STOP) = 1;
    }
    check_push(in, id);
  }

  // --- queues (boss lane only) -------------------------------------------------------------
  KOKKOS_INLINE_FUNCTION void add_items(const Inst& in, int c, int n) const {
    int* q = qf(in, c);
    q[Q_COUNT] += n;
    q[Q_TAIL_CREDIT] += n;
    if (q[Q_COUNT] > qd[c].cap) flag(E_QUEUE_OVERFLOW, c);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION void push_item(const Inst& in, int c, const T& v) const {
    const DataQueue<T> q = queue<T>(in, c);
    if (q.count() < q.cap) q.after_tail(0) = v;
    add_items(in, c, 1);
  }
  // A signal is issued with credit = items queued on this edge since the previous signal.
  KOKKOS_INLINE_FUNCTION void emit_signal(const Inst& in, int c, Signal s) const {
    int* q = qf(in, c);
    s.credit = q[Q_TAIL_CREDIT];
    q[Q_TAIL_CREDIT] = 0;
    q[Q_QUEUED_CREDIT] += s.credit;
    if (q[Q_QUEUED_CREDIT] > q[Q_COUNT]) flag(E_CREDIT, c);
    const SignalQueue sq = signals(in, c);
    if (sq.count() >= sq.cap) {
      flag(E_SIGNAL_OVERFLOW, c);
      return;
    }
    sq.at(sq.count()) = s;
    ++q[S_COUNT];
  }
  KOKKOS_INLINE_FUNCTION void forward_signal(const Inst& in, int id, const Signal& s) const {
    for (int c = 0; c < nd[id].n_channels; ++c) emit_signal(in, nd[id].child[c], s);
  }
  KOKKOS_INLINE_FUNCTION Signal pop_signal(const Inst& in, int id) const {
    int* q = qf(in, id);
    const SignalQueue sq = signals(in, id);
    Signal s = sq.head();
    q[S_HEAD] = q[S_HEAD] + 1 == sq.cap ? 0 : q[S_HEAD] + 1;
    --q[S_COUNT];
    return s;
  }
  KOKKOS_INLINE_FUNCTION void pop_items(const Inst& in, int id, int n) const {
    int* q = qf(in, id);
    int h = q[Q_HEAD] + n;
    while (h >= qd[id].cap) h -= qd[id].cap;
    q[Q_HEAD] = h;
    q[Q_COUNT] -= n;
    // credit bookkeeping: items before the head signal use its credit, others the tail's
    if (g(in, G_SC) < g(in, G_SIGS_TO)) {
      g(in, G_CREDIT) -= n;
      q[Q_QUEUED_CREDIT] -= n;
    } else {
      q[Q_TAIL_CREDIT] -= n;
    }
  }
  // Consume the head signal if its credit is used up (at most one per run).
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION void maybe_consume_signal(const NodeT& node, const Inst& in,
                                                   int id) const {
    if (g(in, G_SC) < g(in, G_SIGS_TO) && g(in, G_CREDIT) == 0) {
      const Signal s = pop_signal(in, id);
      ++g(in, G_SC);
      ++stat(in, id, ST_SIGNALS);
      node.handle_signal(*this, in, id, s);
      if (g(in, G_SC) < g(in, G_SIGS_TO)) g(in, G_CREDIT) = signals(in, id).head().credit;
    }
  }

  // --- regions and parents (boss lane only) -------------------------------------------------
  // A terminal node releases a parent; when the enumerate node is blocked on its full buffer, the
  // release unblocks it and reschedules it if it can fire.
  KOKKOS_INLINE_FUNCTION void release(const Inst& in, int region, int slot) const {
    const int head = region_head[region];
    int& rc = refcount(in, head, slot);
    --rc;
    if (rc < 0) flag(E_CLAIM, head);
    if (rc == 0 && ns(in, head, N_BLOCKED)) {
      ns(in, head, N_BLOCKED) = 0;
      check_push(in, head);
    }
  }
  // Terminal node `id` receives a Boundary of region r: it closes its open parents of r and of
  // the regions nested in r that it terminates (higher numbers), opens the new parent if it
  // terminates r, and otherwise passes the signal on.
  template <class Close, class Open>
  KOKKOS_INLINE_FUNCTION void terminal_boundary(const Inst& in, int id, const Signal& s,
                                                const Close& close, const Open& open) const {
    const unsigned term = nd[id].terminates;
    for (int r = 31; r >= s.region; --r) {
      if (!((term >> r) & 1u)) continue;
      int& o = open_slot(in, id, r);
      if (o >= 0) {
        close(r, o);
        release(in, r, o);
        o = -1;
      }
    }
    if ((term >> s.region) & 1u) {
      open_slot(in, id, s.region) = s.slot;
      open(s.region, s.slot);
    } else {
      forward_signal(in, id, s);
    }
  }
  // Completing a flush of status S: every parent of a region numbered >= S is complete.
  template <class Close>
  KOKKOS_INLINE_FUNCTION void terminal_flush(const Inst& in, int id, int status,
                                             const Close& close) const {
    const unsigned term = nd[id].terminates;
    for (int r = 31; r >= (status < 1 ? 1 : status); --r) {
      if (!((term >> r) & 1u)) continue;
      int& o = open_slot(in, id, r);
      if (o >= 0) {
        close(r, o);
        release(in, r, o);
        o = -1;
      }
    }
  }
  KOKKOS_INLINE_FUNCTION void sink_claim(const Inst& in, int id, int n) const {
    in.wide[0] = static_cast<long long>(
        Kokkos::atomic_fetch_add(&counters(1 + nd[id].sink), static_cast<unsigned long long>(n)));
  }

  // --- firing -------------------------------------------------------------------------------
  KOKKOS_INLINE_FUNCTION void begin_firing(const Inst& in, int id) const {
    const int* q = qf(in, id);
    g(in, G_SIGS_TO) = id == 0 ? 0 : q[S_COUNT];
    g(in, G_SC) = 0;
    g(in, G_CREDIT) = (id != 0 && q[S_COUNT] > 0) ? signals(in, id).head().credit : 0;
    g(in, G_ANYDS) = 0;
    g(in, G_RUNS) = 0;
    ++stat(in, id, ST_FIRINGS);
  }
  // The remaining credit of a firing that stopped early is stored in the head signal.
  KOKKOS_INLINE_FUNCTION void save_credit(const Inst& in, int id) const {
    if (g(in, G_SC) < g(in, G_SIGS_TO)) signals(in, id).head().credit = g(in, G_CREDIT);
  }
  // An active node whose queues are EMPTY becomes inactive; if it was flushing, it completes the
  // flush (terminal nodes close their parents), then sets its successors flushing and activates
  // them. A flushing node whose last run activated a successor completes the flush in a later
  // firing (so an aggregate's final output always has room).
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION void end_if_empty(const NodeT& node, const Inst& in, int id,
                                           bool empty) const {
    if (!empty) return;
    if (!flushing(in, id)) {
      ns(in, id, N_ACTIVE) = 0;
      return;
    }
    if (g(in, G_ANYDS)) return;
    const int status = ns(in, id, N_FLUSH);
    node.on_flush_done(*this, in, id, status);
    ++stat(in, id, ST_FLUSHES);
    ns(in, id, N_FLUSH) = NOT_FLUSHING;
    ns(in, id, N_ACTIVE) = 0;
    propagate_flush(in, id, status);
  }

  // Map, aggregate and sink nodes (the design's firing loop): runs of at most one vector width;
  // with a signal pending a run is limited by the signal's credit and the signal is consumed when
  // the credit reaches zero; without, a run needs a full vector unless the node is flushing.
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION void fire_consumer(const NodeT& node, const member_type& t,
                                            const Inst& in, int id) const {
    Kokkos::single(Kokkos::PerTeam(t), [&]() { begin_firing(in, id); });
    for (int run = 0;; ++run) {
      Kokkos::single(Kokkos::PerTeam(t), [&]() {
        if (run > 0) {
          const int n = g(in, G_PREV_N);
          if (n > 0) node.commit_run(*this, in, id, n);
          pop_items(in, id, n);
          count_run(in, id, n);
          maybe_consume_signal(node, in, id);
          check_children_full(in, id);
        }
        int n = -1;
        if (!g(in, G_ANYDS)) {
          if (g(in, G_SC) < g(in, G_SIGS_TO)) {
            n = imin(g(in, G_CREDIT), W);
          } else {
            const int avail = qf(in, id)[Q_COUNT];
            if (avail > 0 && (avail >= W || flushing(in, id))) n = imin(avail, W);
          }
        }
        if (n > 0) node.plan_run(*this, in, id, n);
        publish_plan(in, run, n);
      });
      sync(t);
      const int n = planned_lanes(in, run);
      if (n < 0) break;
      if (n > 0) {
        node.lanes(*this, t, in, id, n);
        sync(t);
        if constexpr (NodeT::scatters) {
          node.scatter(*this, t, in, id, n);
          sync(t);
        }
      }
    }
    Kokkos::single(Kokkos::PerTeam(t), [&]() {
      save_credit(in, id);
      const int* q = qf(in, id);
      const bool empty =
          q[S_COUNT] == 0 && (flushing(in, id) ? q[Q_COUNT] == 0 : q[Q_COUNT] < qd[id].input_width);
      end_if_empty(node, in, id, empty);
      after_firing(in, id);
    });
  }

  // The source claims chunks of the input with an atomic counter and writes runs of up to one
  // vector width; when the input is exhausted it flushes region 0 (everything) and deactivates.
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION void fire_source(const NodeT& node, const member_type& t,
                                          const Inst& in, int id) const {
    using T = typename NodeT::output_type;
    const int child = nd[id].child[0];
    Kokkos::single(Kokkos::PerTeam(t), [&]() { begin_firing(in, id); });
    for (int run = 0;; ++run) {
      Kokkos::single(Kokkos::PerTeam(t), [&]() {
        if (run > 0) {
          const int n = g(in, G_PREV_N);
          emit_run(in, id, child, n);
          check_children_full(in, id);
        }
        int n = -1;
        if (!g(in, G_ANYDS)) {
          if (ns(in, id, N_NEXT) == ns(in, id, N_CNT) && !ns(in, id, N_HAS_CUR)) {
            const long long base = static_cast<long long>(Kokkos::atomic_fetch_add(
                &counters(0), static_cast<unsigned long long>(chunk)));
            if (base >= n_input) {
              ns(in, id, N_HAS_CUR) = 1;  // exhausted
            } else {
              ns(in, id, N_NEXT) = static_cast<int>(base);
              ns(in, id, N_CNT) = static_cast<int>(imin(base + chunk, n_input));
            }
          }
          if (ns(in, id, N_NEXT) < ns(in, id, N_CNT))
            n = imin(W, ns(in, id, N_CNT) - ns(in, id, N_NEXT));
        }
        publish_plan(in, run, n);
      });
      sync(t);
      const int n = planned_lanes(in, run);
      if (n < 0) break;
      const DataQueue<T> out = queue<T>(in, child);
      const long long first = ns(in, id, N_NEXT);
      const int tail = out.index(out.count());
      T* const data = out.data;
      const int cap = out.cap;
      if (t.team_size() == 1 && n <= qd[child].overhang) {
        // one lane: a contiguous copy from the tail (into the overhang), then wrap the overhang
        T* const dst = data + tail;
        for (int l = 0; l < n; ++l) dst[l] = node.src(first + l);
        wrap_overhang(data, cap, tail, n);
        continue;
      }
      Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](const int l) {
        const int k = tail + l;
        data[k >= cap ? k - cap : k] = node.src(first + l);
      });
      sync(t);
    }
    Kokkos::single(Kokkos::PerTeam(t), [&]() {
      const bool exhausted = ns(in, id, N_HAS_CUR) && ns(in, id, N_NEXT) == ns(in, id, N_CNT);
      if (exhausted && !g(in, G_ANYDS)) {
        ns(in, id, N_ACTIVE) = 0;
        ++stat(in, id, ST_FLUSHES);
        propagate_flush(in, id, 0);
      }
      after_firing(in, id);
    });
  }

  // The enumerate node. A run either continues the current parent, or consumes a signal whose
  // credit is used up, or takes the next parent: it needs a free parent-buffer slot; when the
  // buffer is full the node flushes its region and BLOCKS (the last release unblocks it).
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION void fire_enumerate(const NodeT& node, const member_type& t,
                                             const Inst& in, int id) const {
    using P = typename NodeT::parent_type;
    using T = typename NodeT::element_type;
    const int child = nd[id].child[0];
    const int region = nd[id].heads;
    Kokkos::single(Kokkos::PerTeam(t), [&]() { begin_firing(in, id); });
    for (int run = 0;; ++run) {
      Kokkos::single(Kokkos::PerTeam(t), [&]() {
        if (run > 0) {
          const int n = g(in, G_PREV_N);
          emit_run(in, id, child, n);
          if (ns(in, id, N_HAS_CUR) && ns(in, id, N_NEXT) >= ns(in, id, N_CNT))
            ns(in, id, N_HAS_CUR) = 0;
          if (!ns(in, id, N_HAS_CUR)) maybe_consume_signal(node, in, id);
          check_children_full(in, id);
        }
        int n = -1;
        if (!g(in, G_ANYDS) && !ns(in, id, N_BLOCKED)) {
          const bool pending = g(in, G_SC) < g(in, G_SIGS_TO);
          if (ns(in, id, N_HAS_CUR)) {
            n = imin(W, ns(in, id, N_CNT) - ns(in, id, N_NEXT));
          } else if (pending && g(in, G_CREDIT) == 0) {
            n = 0;  // a run that only consumes the signal
          } else if (qf(in, id)[Q_COUNT] > 0) {
            int slot = -1;
            for (int s = 0; s < nd[id].buffer_slots && slot < 0; ++s)
              if (refcount(in, id, s) == 0) slot = s;
            if (slot < 0) {
              ns(in, id, N_BLOCKED) = 1;
              ++stat(in, id, ST_BLOCKS);
              propagate_flush(in, id, region);
            } else {
              const DataQueue<P> q = queue<P>(in, id);
              P& p = reinterpret_cast<P*>(in.arena + nd[id].arena_off)[slot];
              p = q.at(0);
              refcount(in, id, slot) = nd[id].terminals;
              pop_items(in, id, 1);
              emit_signal(in, child, Signal{Tag::Boundary, region, slot, 0});
              ns(in, id, N_HAS_CUR) = 1;
              ns(in, id, N_SLOT) = slot;
              ns(in, id, N_NEXT) = 0;
              ns(in, id, N_CNT) = node.fn.count(p);
              n = imin(W, ns(in, id, N_CNT));
            }
          }
        }
        publish_plan(in, run, n);
      });
      sync(t);
      const int n = planned_lanes(in, run);
      if (n < 0) break;
      if (n > 0) {
        const DataQueue<T> out = queue<T>(in, child);
        const P& p = reinterpret_cast<const P*>(in.arena + nd[id].arena_off)[ns(in, id, N_SLOT)];
        const int first = ns(in, id, N_NEXT);
        if (t.team_size() == 1 && n <= qd[child].overhang) {
          // one lane: contiguous from the tail (into the overhang), then wrap the overhang
          const int tail = out.index(out.count());
          T* const dst = out.data + tail;
          for (int l = 0; l < n; ++l) dst[l] = node.fn.element(p, first + l);
          wrap_overhang(out.data, out.cap, tail, n);
          continue;
        }
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](const int l) {
          out.after_tail(l) = node.fn.element(p, first + l);
        });
        sync(t);
      }
    }
    Kokkos::single(Kokkos::PerTeam(t), [&]() {
      save_credit(in, id);
      if (!ns(in, id, N_BLOCKED)) {
        const int* q = qf(in, id);
        end_if_empty(node, in, id, !ns(in, id, N_HAS_CUR) && q[S_COUNT] == 0 && q[Q_COUNT] == 0);
      }
      after_firing(in, id);
    });
  }

  template <int I = 0>
  KOKKOS_INLINE_FUNCTION void dispatch(const member_type& t, const Inst& in, int id) const {
    if constexpr (I < N) {
      if (id == I) {
        dget<I>(nodes).fire(*this, t, in, I);
      } else {
        dispatch<I + 1>(t, in, id);
      }
    }
  }

  // --- the kernel: one pipeline instance per league member ---------------------------------
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& t) const {
    const int r = t.league_rank();
    const Inst in{arena.data() + static_cast<std::size_t>(r) * bytes_per_instance, &state(r, 0),
                  &stats(r, 0), &wide(r, 0), r};
    Kokkos::single(Kokkos::PerTeam(t), [&]() {
      for (int i = 0; i < ints_per_instance; ++i) in.state[i] = 0;
      for (int i = 0; i < N * ST_FIELDS; ++i) in.stats[i] = 0;
      for (int x = 0; x < N; ++x) {
        ns(in, x, N_FLUSH) = NOT_FLUSHING;
        for (int k = 0; k < 32; ++k) open_slot(in, x, k) = -1;
      }
      // Initially the source is active, all other nodes inactive, nothing blocked.
      ns(in, 0, N_ACTIVE) = 1;
      check_push(in, 0);
    });
    sync(t);
    for (;;) {
      // The boss picks the next fireable node; execution ends when none is left.
      Kokkos::single(Kokkos::PerTeam(t), [&]() {
        int cur = -1;
        while (cur < 0 && g(in, G_SP) > 0 && !g(in, G_STOP)) {
          const int x = in.state[stack_off + --g(in, G_SP)];
          ns(in, x, N_SCHED) = 0;
          if (fireable(in, x)) cur = x;
        }
        g(in, G_CURRENT) = cur;
      });
      sync(t);
      const int cur = g(in, G_CURRENT);
      if (cur < 0) break;
      dispatch(t, in, cur);
      sync(t);
    }
    // The seed's CLAIM: nothing queued, active, blocked or held at termination.
    Kokkos::single(Kokkos::PerTeam(t), [&]() {
      if (g(in, G_STOP)) return;
      for (int x = 0; x < N; ++x) {
        bool bad = ns(in, x, N_ACTIVE) || ns(in, x, N_BLOCKED) ||
                   ns(in, x, N_FLUSH) != NOT_FLUSHING;
        if (x > 0) {
          const int* q = qf(in, x);
          bad = bad || q[Q_COUNT] != 0 || q[S_COUNT] != 0 || q[Q_QUEUED_CREDIT] != 0;
        }
        if (nd[x].kind == static_cast<int>(NodeKind::Enumerate)) {
          bad = bad || ns(in, x, N_HAS_CUR);
          for (int s = 0; s < nd[x].buffer_slots; ++s) bad = bad || refcount(in, x, s) != 0;
        }
        for (int k = 0; k < 32; ++k) bad = bad || open_slot(in, x, k) >= 0;
        if (bad) flag(E_CLAIM, x);
      }
    });
  }
};

template <class... Nodes, std::size_t... I>
DTuple<Nodes...> to_dtuple(const std::tuple<Nodes...>& t, std::index_sequence<I...>) {
  return DTuple<Nodes...>(std::get<I>(t)...);
}

inline std::size_t align64(std::size_t x) { return (x + 63) / 64 * 64; }

}  // namespace detail

template <class Exec, class... Nodes>
class Pipeline {
 public:
  using exec_space = Exec;
  using machine_type = detail::Machine<Exec, Nodes...>;
  static constexpr int N = sizeof...(Nodes);

  Pipeline(const Graph<Nodes...>& graph, Options options = {})
      : graph_(graph.compile()),
        options_(options),
        m_(detail::to_dtuple(graph.nodes(), std::index_sequence_for<Nodes...>{})) {
    static_assert(sizeof...(Nodes) > 0, "a pipeline needs at least a source");
    constexpr bool host = Kokkos::SpaceAccessibility<Kokkos::HostSpace,
                                                     typename Exec::memory_space>::accessible;
    const std::string& name = graph_.name;
    int W = options.vector_width > 0 ? options.vector_width : (host ? 64 : 128);
    if (W > 1024)
      throw Error::format("dataflow pipeline '{}': vector width {} is above 1024: use a smaller "
                          "width", name, W);
    // On GPUs a team is one lane per item of a run, rounded up to a power of two: the team scan
    // that places a run's outputs needs a power-of-two block (Kokkos' CUDA and HIP scans).
    int team = options.team_size > 0 ? options.team_size : (host ? 1 : detail::next_power_of_two(W));
    if (!host && (team & (team - 1)) != 0)
      throw Error::format("dataflow pipeline '{}': team size {} on {}: a GPU team's scan needs a power "
                          "of two: use {} (or 0 for the default)", name, team, Exec::name(),
                          detail::next_power_of_two(team));
    if (options.queue_scale < 1.0)
      throw Error::format("dataflow pipeline '{}': queue scale factor {} is below the minimum 1 "
                          "(a queue must hold one upstream run plus a consumer vector): use >= 1",
                          name, options.queue_scale);
    int instances = options.instances;
    if (instances <= 0) {
      const int conc = static_cast<int>(Exec().concurrency());
      instances = host ? std::max(1, conc) : std::max(1, conc / team);
    }
    const long long n_input = static_cast<long long>(graph_.nodes[0].sink_capacity);
    if (n_input > INT_MAX / 2)
      throw Error::format("dataflow pipeline '{}': source '{}' has {} items, more than {} per "
                          "run: split the input", name, graph_.nodes[0].name, n_input, INT_MAX / 2);
    const int chunk = options.chunk > 0 ? options.chunk : 8 * W;
    W_ = W;
    team_ = team;
    instances_ = instances;

    machine_type& m = m_;
    m.W = W;
    m.n_input = n_input;
    m.chunk = chunk;
    for (int r = 0; r < 32; ++r) m.region_head[r] = 0;
    for (const Region& r : graph_.regions) m.region_head[r.number] = r.head;

    // int state layout
    int ints = detail::G_FIELDS;
    m.stack_off = ints;
    ints += N;
    m.node_off = ints;
    ints += N * detail::N_FIELDS;
    m.queue_off = ints;
    ints += N * Q_FIELDS;
    m.open_off = ints;
    ints += N * 32;
    // byte arena layout
    std::size_t bytes = 0;
    int n_sinks = 0;
    long long sink_bytes = 0, sink_ints = 0;
    for (int i = 0; i < N; ++i) {
      const NodeSpec& s = graph_.nodes[i];
      auto& d = m.nd[i];
      d.kind = static_cast<int>(s.kind);
      d.parent = graph_.parent[i];
      d.label = graph_.label[i];
      d.heads = graph_.heads[i];
      d.n_channels = static_cast<int>(s.channels.size());
      for (int c = 0; c < d.n_channels; ++c) d.child[c] = graph_.children[i][c];
      d.terminates = graph_.terminates[i];
      if (s.kind == NodeKind::Aggregate) d.closes = graph_.heads[graph_.index_of(s.closes)];
      if (s.kind == NodeKind::Map) {
        for (int c = 0; c < d.n_channels; ++c) {
          d.stage_off[c] = static_cast<int>(bytes);
          bytes = detail::align64(bytes + static_cast<std::size_t>(W) * s.max_outputs[c] *
                                              s.channel_sizes[c]);
          d.counts_off[c] = ints;
          ints += W + 1;
        }
      }
      if (s.kind == NodeKind::Enumerate) {
        if (s.parent_buffer < 1)
          throw Error::format("dataflow graph '{}': enumerate node '{}' has a parent buffer of {} "
                              "slots: use at least 1", name, s.name, s.parent_buffer);
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
        m.sink_off[n_sinks] = sink_bytes;
        m.sink_origin_off[n_sinks] = sink_ints;
        m.sink_cap[n_sinks] = static_cast<long long>(s.sink_capacity);
        sink_bytes += static_cast<long long>(detail::align64(s.sink_capacity * s.input_size));
        sink_ints += static_cast<long long>(s.sink_capacity);
        sink_names_.push_back(i);
        ++n_sinks;
      }
    }
    // queues: capacity from the producer's largest run, the scale factor and the consumer's width
    caps_.assign(N, 0);
    for (int c = 1; c < N; ++c) {
      const int p = graph_.parent[c];
      const NodeSpec& ps = graph_.nodes[p];
      int per_run = W;  // source and enumerate: one vector of items per run
      if (ps.kind == NodeKind::Map) per_run = W * ps.max_outputs[graph_.parent_channel[c]];
      if (ps.kind == NodeKind::Aggregate) per_run = 1;  // one output per consumed signal
      const int input_width = graph_.nodes[c].kind == NodeKind::Enumerate ? 1 : W;
      auto& q = m.qd[c];
      q.full_margin = per_run;
      q.input_width = input_width;
      q.cap = static_cast<int>(std::ceil(options.queue_scale * per_run)) + input_width - 1;
      q.sig_cap = static_cast<int>(std::ceil(options.queue_scale * SIGNAL_FULL_MARGIN));
      // one-lane teams write a producer run contiguously past the tail (see wrap_overhang)
      q.overhang = team == 1 ? per_run : 0;
      q.data_off = static_cast<int>(bytes);
      bytes = detail::align64(bytes + static_cast<std::size_t>(q.cap + q.overhang) *
                                          graph_.nodes[c].input_size);
      q.sig_off = static_cast<int>(bytes);
      bytes = detail::align64(bytes + static_cast<std::size_t>(q.sig_cap) * sizeof(Signal));
      q.state_off = m.queue_off + c * Q_FIELDS;
      caps_[c] = q.cap;
    }
    if (bytes > static_cast<std::size_t>(INT_MAX))
      throw Error::format("dataflow pipeline '{}': one instance needs {} bytes of queues: lower "
                          "the vector width or the queue scale", name, bytes);
    ints = (ints + 15) / 16 * 16;
    m.ints_per_instance = ints;
    m.bytes_per_instance = static_cast<long long>(bytes);
    using mem = typename Exec::memory_space;
    m.state = decltype(m.state)(Kokkos::view_alloc(std::string("korch::dataflow::") + name + "::state",
                                                   Kokkos::WithoutInitializing),
                                instances, ints);
    m.arena = decltype(m.arena)(Kokkos::view_alloc(std::string("korch::dataflow::") + name + "::queues",
                                                   Kokkos::WithoutInitializing),
                                static_cast<std::size_t>(instances) * bytes + 64);
    m.stats = decltype(m.stats)("korch::dataflow::stats", instances, N * detail::ST_FIELDS);
    m.wide = decltype(m.wide)("korch::dataflow::wide", instances, 8);
    m.errors = decltype(m.errors)("korch::dataflow::errors", 2);
    m.counters = decltype(m.counters)("korch::dataflow::counters", 1 + N);
    m.sink_bytes = decltype(m.sink_bytes)(Kokkos::view_alloc("korch::dataflow::sinks",
                                                             Kokkos::WithoutInitializing),
                                          static_cast<std::size_t>(sink_bytes) + 64);
    m.sink_origins = decltype(m.sink_origins)(Kokkos::view_alloc("korch::dataflow::origins",
                                                                 Kokkos::WithoutInitializing),
                                              static_cast<std::size_t>(sink_ints) + 1);
    (void)sizeof(mem);
  }

  // Runs the pipeline over the whole input (blocks until done). Throws korch::Error when a debug
  // check failed inside the kernel.
  RunStats run() {
    Kokkos::deep_copy(m_.errors, 0);
    Kokkos::deep_copy(m_.counters, 0ULL);
    Kokkos::fence();
    const auto t0 = std::chrono::steady_clock::now();
    Kokkos::parallel_for("korch::dataflow::" + graph_.name,
                         typename machine_type::policy(instances_, team_), m_);
    Kokkos::fence();
    const auto t1 = std::chrono::steady_clock::now();
    auto err = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_.errors);
    auto cnt = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_.counters);
    counts_.assign(sink_names_.size(), 0);
    for (std::size_t s = 0; s < sink_names_.size(); ++s) counts_[s] = cnt(1 + s);
    if (err(0) != 0) throw make_error(err(0), err(1));
    RunStats st;
    st.seconds = std::chrono::duration<double>(t1 - t0).count();
    st.instances = instances_;
    st.vector_width = W_;
    st.input_items = m_.n_input;
    auto stats = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_.stats);
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
      ns.utilization = ns.runs > 0 ? static_cast<double>(ns.lanes) /
                                         (static_cast<double>(ns.runs) * W_)
                                   : 0.0;
      st.nodes.push_back(ns);
    }
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
    const int s = m_.nd[i].sink;
    const std::size_t n = counts_.empty() ? 0 : static_cast<std::size_t>(counts_[s]);
    SinkOutput<T> out;
    out.values.resize(n);
    out.instance.resize(n);
    if (n == 0) return out;
    auto bytes = Kokkos::subview(
        m_.sink_bytes, std::make_pair(static_cast<std::size_t>(m_.sink_off[s]),
                                      static_cast<std::size_t>(m_.sink_off[s]) + n * sizeof(T)));
    auto hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), bytes);
    std::memcpy(static_cast<void*>(out.values.data()), hb.data(), n * sizeof(T));
    auto orig = Kokkos::subview(
        m_.sink_origins,
        std::make_pair(static_cast<std::size_t>(m_.sink_origin_off[s]),
                       static_cast<std::size_t>(m_.sink_origin_off[s]) + n));
    auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), orig);
    for (std::size_t k = 0; k < n; ++k) out.instance[k] = ho(k);
    return out;
  }

  const CompiledGraph& graph() const { return graph_; }
  int vector_width() const { return W_; }
  int instances() const { return instances_; }
  int team_size() const { return team_; }
  // capacity of the data queue in front of node `name`
  int queue_capacity(const std::string& name) const {
    const int i = graph_.index_of(name);
    if (i <= 0) throw Error::format("dataflow pipeline '{}': no queue in front of '{}'",
                                    graph_.name, name);
    return caps_[i];
  }

 private:
  Error make_error(int bits, int node) const {
    std::string what;
    auto add = [&](int bit, const char* text) {
      if (bits & bit) what += std::string(what.empty() ? "" : "; ") + text;
    };
    add(E_CREDIT, "a signal was issued with more credit than its data queue holds");
    add(E_QUEUE_OVERFLOW, "a data queue overflowed");
    add(E_SIGNAL_OVERFLOW, "a signal queue overflowed");
    add(E_EMIT_OVERFLOW, "a node emitted more items per input than its channel declares "
                         "(raise the Out<T, K> maximum)");
    add(E_SINK_OVERFLOW, "a sink received more items than its capacity (pass a larger capacity "
                         "to .sink)");
    add(E_CLAIM, "at termination data, signals, an active node or an unreleased parent remained");
    add(E_NO_PARENT, "an aggregate received items outside any parent");
    add(E_STALL, "a node stayed fireable without progress");
    const std::string who = node >= 0 && node < N ? graph_.nodes[node].name : "?";
    return Error::format("dataflow pipeline '{}': debug check failed at node '{}': {}",
                         graph_.name, who, what);
  }

  CompiledGraph graph_;
  Options options_;
  machine_type m_;
  int W_ = 1, team_ = 1, instances_ = 1;
  std::vector<int> caps_;
  std::vector<int> sink_names_;
  std::vector<unsigned long long> counts_;
};

template <class Exec = DeviceExecSpace, class... Nodes>
Pipeline<Exec, Nodes...> make_pipeline(const Graph<Nodes...>& graph, Options options = {}) {
  return Pipeline<Exec, Nodes...>(graph, options);
}

}  // namespace korch::dataflow
