// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The pipeline kernel's data and the boss lane's bookkeeping (the MERCATOR protocol on one
// instance's state): the layout of every instance, the Views that hold all instances, accessors,
// scheduling, the queues and signals of each edge, and the parents of enumeration regions. The
// firing loops that use it are PipelineKernel's (pipeline_kernel.hpp), which derives from it and
// is what node hooks receive as `kernel`.
#pragma once

#include <korch/dataflow/error_bits.hpp>
#include <korch/dataflow/instance_state.hpp>
#include <korch/dataflow/queue.hpp>
#include <korch/dataflow/signal.hpp>

#include <korch/backend/launch_hint.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace korch::dataflow::detail {

// The most output channels of any of the node types (at least 1).
template <class... T>
constexpr int max_channels() {
  int m = 1;
  ((m = T::n_channels > m ? T::n_channels : m), ...);
  return m;
}

// std::min is not callable in device code.
template <class T>
KOKKOS_INLINE_FUNCTION T smaller_of(T a, T b) {
  return a < b ? a : b;
}

// Filled in by Pipeline on the host (layout, Views), then copied into the kernel.
template <class ExecSpace, class... Nodes>
class PipelineProtocol {
 public:
  static constexpr int N = sizeof...(Nodes);
  static constexpr int C = max_channels<Nodes...>();
  using exec_space = ExecSpace;
  using mem_space = typename ExecSpace::memory_space;
  // Pipelines launched by several threads at once (launch_hint.hpp).
  using policy = Kokkos::TeamPolicy<ExecSpace, ConcurrentLaunchHint>;
  using member_type = typename policy::member_type;

  Kokkos::Array<NodeDesc<C>, N> nd;
  Kokkos::Array<QueueDesc, N> qd;  // indexed by consumer node
  Kokkos::Array<int, 32> region_head;
  int W = 1;
  int stack_off = 0, node_off = 0, queue_off = 0, open_off = 0;
  int ints_per_instance = 0;
  long long bytes_per_instance = 0;
  // Instance memory in team scratch (docs/dataflow.md, "Instance memory"): one block of
  // scratch_bytes holds the arena, then the ints, the statistics and the wide scratch, at these
  // byte offsets; the statistics are copied to `stats` at the end.
  bool in_scratch = false;
  long long scratch_bytes = 0;
  long long scratch_state_off = 0, scratch_stats_off = 0, scratch_wide_off = 0;
  long long n_input = 0;
  int chunk = 1;
  Kokkos::Array<long long, (N > 0 ? N : 1)> sink_off;  // byte offset in sink arena
  Kokkos::Array<long long, (N > 0 ? N : 1)> sink_origin_off;
  Kokkos::Array<long long, (N > 0 ? N : 1)> sink_cap;

  Kokkos::View<int**, Kokkos::LayoutRight, mem_space> state;
  Kokkos::View<char*, mem_space> arena;
  Kokkos::View<long long**, Kokkos::LayoutRight, mem_space> stats;
  Kokkos::View<long long**, Kokkos::LayoutRight, mem_space> wide;
  Kokkos::View<int*, mem_space> errors;                   // [0] bits, [1] node
  Kokkos::View<unsigned long long*, mem_space> counters;  // [0] input, [1+s] sink s
  Kokkos::View<char*, mem_space> sink_bytes;
  Kokkos::View<int*, mem_space> sink_origins;
  Kokkos::View<unsigned long long*, mem_space> sig_counts;  // user signals reaching sink s
  Kokkos::View<SignalRecord*, mem_space> sig_log;           // sink s: [s*sig_log_cap, +sig_log_cap)
  int sig_log_cap = 0;

  // --- accessors --------------------------------------------------------------------------
  KOKKOS_INLINE_FUNCTION int vector_width() const { return W; }
  KOKKOS_INLINE_FUNCTION const NodeDesc<C>& desc(int id) const { return nd[id]; }
  KOKKOS_INLINE_FUNCTION const QueueDesc& queue_desc(int c) const { return qd[c]; }
  // team_barrier, skipped for one-lane teams (host spaces)
  KOKKOS_INLINE_FUNCTION static void sync(const member_type& t) {
    if (t.team_size() > 1) t.team_barrier();
  }
  // instance-global int f (GlobalField)
  KOKKOS_INLINE_FUNCTION int& global_field(const InstanceState& in, int f) const { return in.state[f]; }
  // int f (NodeField) of node id
  KOKKOS_INLINE_FUNCTION int& node_field(const InstanceState& in, int id, int f) const {
    return in.state[node_off + id * N_FIELDS + f];
  }
  // the counters (QueueField) of the queues in front of node c
  KOKKOS_INLINE_FUNCTION int* queue_fields(const InstanceState& in, int c) const { return in.state + qd[c].state_off; }
  template <class T>
  KOKKOS_INLINE_FUNCTION DataQueue<T> queue(const InstanceState& in, int c) const {
    return DataQueue<T>{reinterpret_cast<T*>(in.arena + qd[c].data_off), qd[c].cap, queue_fields(in, c)};
  }
  KOKKOS_INLINE_FUNCTION SignalQueue signals(const InstanceState& in, int c) const {
    return SignalQueue{reinterpret_cast<Signal*>(in.arena + qd[c].sig_off), qd[c].sig_cap, queue_fields(in, c)};
  }
  KOKKOS_INLINE_FUNCTION int& open_slot(const InstanceState& in, int id, int region) const {
    return in.state[open_off + id * 32 + region];
  }
  KOKKOS_INLINE_FUNCTION int& refcount(const InstanceState& in, int head, int slot) const {
    return in.state[nd[head].refcount_off + slot];
  }
  template <class P>
  KOKKOS_INLINE_FUNCTION P& parent_at(const InstanceState& in, int region, int slot) const {
    return reinterpret_cast<P*>(in.arena + nd[region_head[region]].arena_off)[slot];
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION T* sink_data(int s) const {
    return reinterpret_cast<T*>(sink_bytes.data() + sink_off[s]);
  }
  KOKKOS_INLINE_FUNCTION int* sink_origin(int s) const { return sink_origins.data() + sink_origin_off[s]; }
  KOKKOS_INLINE_FUNCTION long long sink_capacity(int s) const { return sink_cap[s]; }
  KOKKOS_INLINE_FUNCTION long long& stat(const InstanceState& in, int id, int f) const {
    return in.stats[id * ST_FIELDS + f];
  }
  KOKKOS_INLINE_FUNCTION void flag(int bits, int node) const {
    Kokkos::atomic_fetch_or(&errors(0), bits);
    errors(1) = node;
  }

  // --- scheduling (boss lane only) ---------------------------------------------------------
  KOKKOS_INLINE_FUNCTION bool flushing(const InstanceState& in, int id) const {
    return node_field(in, id, N_FLUSH) <= nd[id].label;
  }
  KOKKOS_INLINE_FUNCTION bool fireable(const InstanceState& in, int x) const {
    if (!node_field(in, x, N_ACTIVE) || node_field(in, x, N_BLOCKED)) return false;
    for (int c = 0; c < nd[x].n_channels; ++c)
      if (node_field(in, nd[x].child[c], N_ACTIVE)) return false;
    return true;
  }
  // Fireable nodes are put on the scheduler stack at most once.
  KOKKOS_INLINE_FUNCTION void check_push(const InstanceState& in, int x) const {
    if (x < 0 || node_field(in, x, N_SCHED) || !fireable(in, x)) return;
    node_field(in, x, N_SCHED) = 1;
    in.state[stack_off + global_field(in, G_SP)++] = x;
  }
  KOKKOS_INLINE_FUNCTION void activate(const InstanceState& in, int x) const {
    node_field(in, x, N_ACTIVE) = 1;
    check_push(in, x);
  }
  // FULL: not enough room for the producer's largest run (data) or its signals.
  KOKKOS_INLINE_FUNCTION bool full(const InstanceState& in, int c) const {
    const int* q = queue_fields(in, c);
    return qd[c].cap - q[Q_COUNT] < qd[c].full_margin || qd[c].sig_cap - q[S_COUNT] < qd[c].sig_margin;
  }
  // The boss's plan for run `run` (n lanes, -1: stop firing), read by every lane after the barrier;
  // two slots alternate so that the next plan never overwrites one still being read. The run's
  // outputs are published at the start of the next run (G_PREV_N).
  KOKKOS_INLINE_FUNCTION void publish_plan(const InstanceState& in, int run, int n) const {
    global_field(in, G_PLAN0 + (run & 1)) = n;
    global_field(in, G_PREV_N) = n;
  }
  KOKKOS_INLINE_FUNCTION int planned_lanes(const InstanceState& in, int run) const {
    return in.state[G_PLAN0 + (run & 1)];
  }
  // The bookkeeping of a finished run of n lanes (statistics for lane utilization).
  KOKKOS_INLINE_FUNCTION void count_run(const InstanceState& in, int id, int n) const {
    ++stat(in, id, ST_RUNS);
    ++global_field(in, G_RUNS);
    stat(in, id, ST_LANES) += n;
  }
  // A source-like node's finished run: its n outputs become items of `child`.
  KOKKOS_INLINE_FUNCTION void emit_run(const InstanceState& in, int id, int child, int n) const {
    add_items(in, child, n);
    node_field(in, id, N_NEXT) += n;
    count_run(in, id, n);
  }
  KOKKOS_INLINE_FUNCTION void check_children_full(const InstanceState& in, int id) const {
    for (int c = 0; c < nd[id].n_channels; ++c) {
      const int ch = nd[id].child[c];
      if (full(in, ch)) {
        if (!node_field(in, ch, N_ACTIVE)) activate(in, ch);
        global_field(in, G_ANYDS) = 1;
      }
    }
  }
  // A flush with status S propagates to the successors whose region number is >= S.
  KOKKOS_INLINE_FUNCTION void propagate_flush(const InstanceState& in, int id, int status) const {
    for (int c = 0; c < nd[id].n_channels; ++c) {
      const int ch = nd[id].child[c];
      if (nd[ch].label < status) continue;
      int& f = node_field(in, ch, N_FLUSH);
      if (status < f) f = status;
      activate(in, ch);
    }
  }
  KOKKOS_INLINE_FUNCTION void after_firing(const InstanceState& in, int id) const {
    if (!node_field(in, id, N_ACTIVE)) check_push(in, nd[id].parent);
    if (global_field(in, G_RUNS) == 0 && fireable(in, id)) {  // would loop forever: report, stop
      flag(E_STALL, id);
      global_field(in, G_STOP) = 1;
    }
    check_push(in, id);
  }

  // --- queues (boss lane only) -------------------------------------------------------------
  KOKKOS_INLINE_FUNCTION void add_items(const InstanceState& in, int c, int n) const {
    int* q = queue_fields(in, c);
    q[Q_COUNT] += n;
    q[Q_TAIL_CREDIT] += n;
    if (q[Q_COUNT] > qd[c].cap) flag(E_QUEUE_OVERFLOW, c);
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION void push_item(const InstanceState& in, int c, const T& v) const {
    const DataQueue<T> q = queue<T>(in, c);
    if (q.count() < q.cap) q.after_tail(0) = v;
    add_items(in, c, 1);
  }
  // A signal is issued with credit = items queued on this edge since the previous signal.
  KOKKOS_INLINE_FUNCTION void emit_signal(const InstanceState& in, int c, Signal s) const {
    int* q = queue_fields(in, c);
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
  KOKKOS_INLINE_FUNCTION void forward_signal(const InstanceState& in, int id, const Signal& s) const {
    for (int c = 0; c < nd[id].n_channels; ++c) emit_signal(in, nd[id].child[c], s);
  }
  KOKKOS_INLINE_FUNCTION Signal pop_signal(const InstanceState& in, int id) const {
    int* q = queue_fields(in, id);
    const SignalQueue sq = signals(in, id);
    Signal s = sq.head();
    q[S_HEAD] = q[S_HEAD] + 1 == sq.cap ? 0 : q[S_HEAD] + 1;
    --q[S_COUNT];
    return s;
  }
  KOKKOS_INLINE_FUNCTION void pop_items(const InstanceState& in, int id, int n) const {
    int* q = queue_fields(in, id);
    int h = q[Q_HEAD] + n;
    while (h >= qd[id].cap) h -= qd[id].cap;
    q[Q_HEAD] = h;
    q[Q_COUNT] -= n;
    // credit bookkeeping: items before the head signal use its credit, others the tail's
    if (global_field(in, G_SC) < global_field(in, G_SIGS_TO)) {
      global_field(in, G_CREDIT) -= n;
      q[Q_QUEUED_CREDIT] -= n;
    } else {
      q[Q_TAIL_CREDIT] -= n;
    }
  }

  // --- regions and parents (boss lane only) -------------------------------------------------
  // A terminal node releases a parent; when the enumerate node is blocked on its full buffer, the
  // release unblocks it and reschedules it if it can fire.
  KOKKOS_INLINE_FUNCTION void release(const InstanceState& in, int region, int slot) const {
    const int head = region_head[region];
    int& rc = refcount(in, head, slot);
    --rc;
    if (rc < 0) flag(E_CLAIM, head);
    if (rc == 0 && node_field(in, head, N_BLOCKED)) {
      node_field(in, head, N_BLOCKED) = 0;
      check_push(in, head);
    }
  }
  // Terminal node `id` receives a Boundary of region r: it closes its open parents of r and of
  // the regions nested in r that it terminates (higher numbers), opens the new parent if it
  // terminates r, and otherwise passes the signal on.
  template <class Close, class Open>
  KOKKOS_INLINE_FUNCTION void terminal_boundary(const InstanceState& in, int id, const Signal& s, const Close& close,
                                                const Open& open) const {
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
  KOKKOS_INLINE_FUNCTION void terminal_flush(const InstanceState& in, int id, int status, const Close& close) const {
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
  // A user signal reached sink `id`: counted, and recorded when the sink's log has room.
  KOKKOS_INLINE_FUNCTION void log_signal(const InstanceState& in, int id, const Signal& s) const {
    const int sk = nd[id].sink;
    const unsigned long long k = Kokkos::atomic_fetch_add(&sig_counts(sk), 1ULL);
    if (sig_log_cap == 0) return;
    if (k >= static_cast<unsigned long long>(sig_log_cap)) {
      flag(E_SIGNAL_LOG, id);
      return;
    }
    SignalRecord& r = sig_log(static_cast<std::size_t>(sk) * sig_log_cap + k);
    r.instance = in.rank;
    r.position = stat(in, id, ST_LANES);
    r.signal = s.user;
  }
  KOKKOS_INLINE_FUNCTION void sink_claim(const InstanceState& in, int id, int n) const {
    in.wide[0] = static_cast<long long>(
        Kokkos::atomic_fetch_add(&counters(1 + nd[id].sink), static_cast<unsigned long long>(n)));
  }
};

}  // namespace korch::dataflow::detail
