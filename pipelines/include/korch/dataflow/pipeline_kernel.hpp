// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The pipeline kernel: one league member of a Kokkos::TeamPolicy runs one complete pipeline
// instance. One boss lane (Kokkos::single(PerTeam)) picks the next fireable node and updates the
// scheduling state (PipelineProtocol); the lanes of the team are the vector: a run processes up
// to `vector_width` items, one per lane. Firing loops for sources, enumerates and consumers (map,
// aggregate, sink) are here; each node kind chooses its loop in fire() and fills in its hooks.
#pragma once

#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/protocol.hpp>
#include <korch/device_tuple.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace korch::dataflow::detail {

template <class ExecSpace, class... Nodes>
class PipelineKernel : public PipelineProtocol<ExecSpace, Nodes...> {
  using Base = PipelineProtocol<ExecSpace, Nodes...>;

 public:
  using Base::N;
  using typename Base::member_type;
  using typename Base::policy;

  explicit PipelineKernel(const korch::detail::DeviceTuple<Nodes...>& n) : nodes(n) {}

  korch::detail::DeviceTuple<Nodes...> nodes;

  // the protocol's state and bookkeeping, used unqualified below (public: node hooks call them)
  using Base::activate;
  using Base::add_items;
  using Base::after_firing;
  using Base::arena;
  using Base::bytes_per_instance;
  using Base::check_children_full;
  using Base::check_push;
  using Base::chunk;
  using Base::count_run;
  using Base::counters;
  using Base::emit_run;
  using Base::emit_signal;
  using Base::fireable;
  using Base::flag;
  using Base::flushing;
  using Base::global_field;
  using Base::in_scratch;
  using Base::ints_per_instance;
  using Base::n_input;
  using Base::nd;
  using Base::node_field;
  using Base::open_slot;
  using Base::planned_lanes;
  using Base::pop_items;
  using Base::pop_signal;
  using Base::propagate_flush;
  using Base::publish_plan;
  using Base::qd;
  using Base::queue_fields;
  using Base::refcount;
  using Base::scratch_bytes;
  using Base::scratch_state_off;
  using Base::scratch_stats_off;
  using Base::scratch_wide_off;
  using Base::signals;
  using Base::stack_off;
  using Base::stat;
  using Base::state;
  using Base::stats;
  using Base::sync;
  using Base::W;
  using Base::wide;

  // Consume the head signal if its credit is used up (at most one per run).
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION void maybe_consume_signal(const NodeT& node, const InstanceState& in, int id) const {
    if (global_field(in, G_SC) < global_field(in, G_SIGS_TO) && global_field(in, G_CREDIT) == 0) {
      const Signal s = pop_signal(in, id);
      ++global_field(in, G_SC);
      ++stat(in, id, ST_SIGNALS);
      node.handle_signal(*this, in, id, s);
      if (global_field(in, G_SC) < global_field(in, G_SIGS_TO))
        global_field(in, G_CREDIT) = signals(in, id).head().credit;
    }
  }

  // --- firing -------------------------------------------------------------------------------
  KOKKOS_INLINE_FUNCTION void begin_firing(const InstanceState& in, int id) const {
    const int* q = queue_fields(in, id);
    global_field(in, G_SIGS_TO) = id == 0 ? 0 : q[S_COUNT];
    global_field(in, G_SC) = 0;
    global_field(in, G_CREDIT) = (id != 0 && q[S_COUNT] > 0) ? signals(in, id).head().credit : 0;
    global_field(in, G_ANYDS) = 0;
    global_field(in, G_RUNS) = 0;
    ++stat(in, id, ST_FIRINGS);
  }
  // The remaining credit of a firing that stopped early is stored in the head signal.
  KOKKOS_INLINE_FUNCTION void save_credit(const InstanceState& in, int id) const {
    if (global_field(in, G_SC) < global_field(in, G_SIGS_TO))
      signals(in, id).head().credit = global_field(in, G_CREDIT);
  }
  // An active node whose queues are EMPTY becomes inactive; if it was flushing, it completes the
  // flush (terminal nodes close their parents), then sets its successors flushing and activates
  // them. A flushing node whose last run activated a successor completes the flush in a later
  // firing (so an aggregate's final output always has room).
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION void end_if_empty(const NodeT& node, const InstanceState& in, int id, bool empty) const {
    if (!empty) return;
    if (!flushing(in, id)) {
      node_field(in, id, N_ACTIVE) = 0;
      return;
    }
    if (global_field(in, G_ANYDS)) return;
    const int status = node_field(in, id, N_FLUSH);
    node.on_flush_done(*this, in, id, status);
    ++stat(in, id, ST_FLUSHES);
    node_field(in, id, N_FLUSH) = NOT_FLUSHING;
    node_field(in, id, N_ACTIVE) = 0;
    propagate_flush(in, id, status);
  }

  // Map, aggregate and sink nodes (the design's firing loop): runs of at most one vector width;
  // with a signal pending a run is limited by the signal's credit and the signal is consumed when
  // the credit reaches zero; without, a run needs a full vector unless the node is flushing.
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION void fire_consumer(const NodeT& node, const member_type& t, const InstanceState& in,
                                            int id) const {
    Kokkos::single(Kokkos::PerTeam(t), [&]() { begin_firing(in, id); });
    for (int run = 0;; ++run) {
      Kokkos::single(Kokkos::PerTeam(t), [&]() {
        if (run > 0) {
          const int n = global_field(in, G_PREV_N);
          if (n > 0) node.commit_run(*this, in, id, n);
          pop_items(in, id, n);
          count_run(in, id, n);
          maybe_consume_signal(node, in, id);
          check_children_full(in, id);
        }
        int n = -1;
        if (!global_field(in, G_ANYDS)) {
          if (global_field(in, G_SC) < global_field(in, G_SIGS_TO)) {
            n = smaller_of(global_field(in, G_CREDIT), W);
          } else {
            const int avail = queue_fields(in, id)[Q_COUNT];
            if (avail > 0 && (avail >= W || flushing(in, id))) n = smaller_of(avail, W);
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
          if (node.scatters_on(t, W)) {
            node.scatter(*this, t, in, id, n);
            sync(t);
          }
        }
      }
    }
    Kokkos::single(Kokkos::PerTeam(t), [&]() {
      save_credit(in, id);
      const int* q = queue_fields(in, id);
      const bool empty = q[S_COUNT] == 0 && (flushing(in, id) ? q[Q_COUNT] == 0 : q[Q_COUNT] < qd[id].input_width);
      end_if_empty(node, in, id, empty);
      after_firing(in, id);
    });
  }

  // The source claims chunks of the input with an atomic counter and writes runs of up to one
  // vector width; when the input is exhausted it flushes region 0 (everything) and deactivates.
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION void fire_source(const NodeT& node, const member_type& t, const InstanceState& in,
                                          int id) const {
    using T = typename NodeT::output_type;
    const int child = nd[id].child[0];
    Kokkos::single(Kokkos::PerTeam(t), [&]() { begin_firing(in, id); });
    for (int run = 0;; ++run) {
      Kokkos::single(Kokkos::PerTeam(t), [&]() {
        if (run > 0) {
          const int n = global_field(in, G_PREV_N);
          emit_producer_run(node, in, id, child, n);
          check_children_full(in, id);
        }
        int n = -1;
        if (!global_field(in, G_ANYDS)) {
          if (node_field(in, id, N_NEXT) == node_field(in, id, N_CNT) && !node_field(in, id, N_HAS_CUR)) {
            const long long base =
                static_cast<long long>(Kokkos::atomic_fetch_add(&counters(0), static_cast<unsigned long long>(chunk)));
            if (base >= n_input) {
              node_field(in, id, N_HAS_CUR) = 1;  // exhausted
            } else {
              node_field(in, id, N_NEXT) = static_cast<int>(base);
              node_field(in, id, N_CNT) = static_cast<int>(smaller_of(base + chunk, n_input));
            }
          }
          if (node_field(in, id, N_NEXT) < node_field(in, id, N_CNT))
            n = smaller_of(W, node_field(in, id, N_CNT) - node_field(in, id, N_NEXT));
        }
        publish_plan(in, run, n);
      });
      sync(t);
      const int n = planned_lanes(in, run);
      if (n < 0) break;
      const DataQueue<T> out = this->template queue<T>(in, child);
      const long long first = node_field(in, id, N_NEXT);
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
      const bool exhausted = node_field(in, id, N_HAS_CUR) && node_field(in, id, N_NEXT) == node_field(in, id, N_CNT);
      if (exhausted && !global_field(in, G_ANYDS)) {
        node_field(in, id, N_ACTIVE) = 0;
        ++stat(in, id, ST_FLUSHES);
        propagate_flush(in, id, 0);
      }
      after_firing(in, id);
    });
  }

  // A source's or enumerate's finished run: its n outputs become items of `child`; a node that
  // raises user signals gets its hook called after each output (boss lane), so each signal follows
  // the items before it.
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION void emit_producer_run(const NodeT& node, const InstanceState& in, int id, int child,
                                                int n) const {
    if constexpr (NodeT::raises > 0) {
      const int first = node_field(in, id, N_NEXT);
      for (int l = 0; l < n; ++l) {
        add_items(in, child, 1);
        node.raise_after(*this, in, id, first + l);
      }
      node_field(in, id, N_NEXT) += n;
      count_run(in, id, n);
    } else {
      emit_run(in, id, child, n);
    }
  }

  // The enumerate node. A run either continues the current parent, or consumes a signal whose
  // credit is used up, or takes the next parent: it needs a free parent-buffer slot; when the
  // buffer is full the node flushes its region and BLOCKS (the last release unblocks it).
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION void fire_enumerate(const NodeT& node, const member_type& t, const InstanceState& in,
                                             int id) const {
    using P = typename NodeT::parent_type;
    using T = typename NodeT::element_type;
    const int child = nd[id].child[0];
    Kokkos::single(Kokkos::PerTeam(t), [&]() { begin_firing(in, id); });
    for (int run = 0;; ++run) {
      Kokkos::single(Kokkos::PerTeam(t), [&]() {
        if (run > 0) {
          const int n = global_field(in, G_PREV_N);
          emit_producer_run(node, in, id, child, n);
          if (node_field(in, id, N_HAS_CUR) && node_field(in, id, N_NEXT) >= node_field(in, id, N_CNT))
            node_field(in, id, N_HAS_CUR) = 0;
          if (!node_field(in, id, N_HAS_CUR)) maybe_consume_signal(node, in, id);
          check_children_full(in, id);
        }
        int n = -1;
        if (!global_field(in, G_ANYDS) && !node_field(in, id, N_BLOCKED)) {
          const bool pending = global_field(in, G_SC) < global_field(in, G_SIGS_TO);
          if (node_field(in, id, N_HAS_CUR)) {
            n = smaller_of(W, node_field(in, id, N_CNT) - node_field(in, id, N_NEXT));
          } else if (pending && global_field(in, G_CREDIT) == 0) {
            n = 0;  // a run that only consumes the signal
          } else if (queue_fields(in, id)[Q_COUNT] > 0) {
            n = take_parent(node, in, id);
          }
        }
        publish_plan(in, run, n);
      });
      sync(t);
      const int n = planned_lanes(in, run);
      if (n < 0) break;
      if (n > 0) {
        const DataQueue<T> out = this->template queue<T>(in, child);
        const P& p = reinterpret_cast<const P*>(in.arena + nd[id].arena_off)[node_field(in, id, N_SLOT)];
        const int first = node_field(in, id, N_NEXT);
        if (t.team_size() == 1 && n <= qd[child].overhang) {
          // one lane: contiguous from the tail (into the overhang), then wrap the overhang
          const int tail = out.index(out.count());
          T* const dst = out.data + tail;
          for (int l = 0; l < n; ++l) dst[l] = node.fn.element(p, first + l);
          wrap_overhang(out.data, out.cap, tail, n);
          continue;
        }
        Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n),
                             [&](const int l) { out.after_tail(l) = node.fn.element(p, first + l); });
        sync(t);
      }
    }
    Kokkos::single(Kokkos::PerTeam(t), [&]() {
      save_credit(in, id);
      if (!node_field(in, id, N_BLOCKED)) {
        const int* q = queue_fields(in, id);
        end_if_empty(node, in, id, !node_field(in, id, N_HAS_CUR) && q[S_COUNT] == 0 && q[Q_COUNT] == 0);
      }
      after_firing(in, id);
    });
  }

  // The enumerate node takes the parent at the head of its queue into a free buffer slot and
  // issues its Boundary signal; with no free slot it flushes its region and blocks. Returns the
  // lanes of the run (-1: blocked).
  template <class NodeT>
  KOKKOS_INLINE_FUNCTION int take_parent(const NodeT& node, const InstanceState& in, int id) const {
    using P = typename NodeT::parent_type;
    const int child = nd[id].child[0];
    const int region = nd[id].heads;
    int slot = -1;
    for (int s = 0; s < nd[id].buffer_slots && slot < 0; ++s)
      if (refcount(in, id, s) == 0) slot = s;
    if (slot < 0) {
      node_field(in, id, N_BLOCKED) = 1;
      ++stat(in, id, ST_BLOCKS);
      propagate_flush(in, id, region);
      return -1;
    }
    const DataQueue<P> q = this->template queue<P>(in, id);
    P& p = reinterpret_cast<P*>(in.arena + nd[id].arena_off)[slot];
    p = q.at(0);
    refcount(in, id, slot) = nd[id].terminals;
    pop_items(in, id, 1);
    emit_signal(in, child, Signal::boundary(region, slot));
    node_field(in, id, N_HAS_CUR) = 1;
    node_field(in, id, N_SLOT) = slot;
    node_field(in, id, N_NEXT) = 0;
    node_field(in, id, N_CNT) = node.fn.count(p);
    return smaller_of(W, node_field(in, id, N_CNT));
  }

  template <int I = 0>
  KOKKOS_INLINE_FUNCTION void dispatch(const member_type& t, const InstanceState& in, int id) const {
    if constexpr (I < N) {
      if (id == I) {
        korch::detail::get<I>(nodes).fire(*this, t, in, I);
      } else {
        dispatch<I + 1>(t, in, id);
      }
    }
  }

  // --- the kernel: one pipeline instance per league member ---------------------------------
  KOKKOS_INLINE_FUNCTION void operator()(const member_type& t) const {
    const InstanceState in = instance_memory(t);
    if (in.arena == nullptr) {
      Kokkos::single(Kokkos::PerTeam(t), [&]() { flag(E_SCRATCH, 0); });
      return;
    }
    // All lanes clear the state (hundreds of ints), then the boss sets the few that start nonzero.
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, ints_per_instance), [&](const int i) { in.state[i] = 0; });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, N * ST_FIELDS), [&](const int i) { in.stats[i] = 0; });
    sync(t);
    Kokkos::single(Kokkos::PerTeam(t), [&]() { start_instance(in); });
    sync(t);
    for (;;) {
      // The boss picks the next fireable node; execution ends when none is left.
      Kokkos::single(Kokkos::PerTeam(t), [&]() { global_field(in, G_CURRENT) = pick_next(in); });
      sync(t);
      const int cur = global_field(in, G_CURRENT);
      if (cur < 0) break;
      dispatch(t, in, cur);
      sync(t);
    }
    Kokkos::single(Kokkos::PerTeam(t), [&]() { check_claim(in); });
    if (in_scratch)
      Kokkos::parallel_for(Kokkos::TeamThreadRange(t, N * ST_FIELDS),
                           [&](const int i) { stats(in.rank, i) = in.stats[i]; });
  }

  // This league member's instance: its rows of the Views, or one block of team scratch memory
  // (every lane of the team gets the same block). A null arena: the scratch was not there.
  KOKKOS_INLINE_FUNCTION InstanceState instance_memory(const member_type& t) const {
    const int r = t.league_rank();
    if (!in_scratch)
      return InstanceState{arena.data() + static_cast<std::size_t>(r) * bytes_per_instance, &state(r, 0), &stats(r, 0),
                           &wide(r, 0), r};
    // 64-byte aligned like a View's data, so that the arena's offsets keep every item aligned
    char* base = static_cast<char*>(t.team_scratch(0).get_shmem_aligned(scratch_bytes, 64));
    if (base == nullptr) return InstanceState{nullptr, nullptr, nullptr, nullptr, r};
    return InstanceState{base, reinterpret_cast<int*>(base + scratch_state_off),
                         reinterpret_cast<long long*>(base + scratch_stats_off),
                         reinterpret_cast<long long*>(base + scratch_wide_off), r};
  }

  // Boss lane, on zeroed state: no flush, no open parent; the source is active, all other nodes
  // inactive, nothing blocked.
  KOKKOS_INLINE_FUNCTION void start_instance(const InstanceState& in) const {
    for (int x = 0; x < N; ++x) {
      node_field(in, x, N_FLUSH) = NOT_FLUSHING;
      for (int k = 0; k < 32; ++k) open_slot(in, x, k) = -1;
    }
    node_field(in, 0, N_ACTIVE) = 1;
    check_push(in, 0);
  }

  // Boss lane: pops the scheduler stack until a node that can still fire; -1 when none is left
  // or the instance stopped on an error.
  KOKKOS_INLINE_FUNCTION int pick_next(const InstanceState& in) const {
    int cur = -1;
    while (cur < 0 && global_field(in, G_SP) > 0 && !global_field(in, G_STOP)) {
      const int x = in.state[stack_off + --global_field(in, G_SP)];
      node_field(in, x, N_SCHED) = 0;
      if (fireable(in, x)) cur = x;
    }
    return cur;
  }

  // Boss lane, at termination (the protocol's CLAIM): nothing queued, active, blocked or held.
  KOKKOS_INLINE_FUNCTION void check_claim(const InstanceState& in) const {
    if (global_field(in, G_STOP)) return;
    for (int x = 0; x < N; ++x) {
      bool bad =
          node_field(in, x, N_ACTIVE) || node_field(in, x, N_BLOCKED) || node_field(in, x, N_FLUSH) != NOT_FLUSHING;
      if (x > 0) {
        const int* q = queue_fields(in, x);
        bad = bad || q[Q_COUNT] != 0 || q[S_COUNT] != 0 || q[Q_QUEUED_CREDIT] != 0;
      }
      if (nd[x].kind == static_cast<int>(NodeKind::Enumerate)) {
        bad = bad || node_field(in, x, N_HAS_CUR);
        for (int s = 0; s < nd[x].buffer_slots; ++s) bad = bad || refcount(in, x, s) != 0;
      }
      for (int k = 0; k < 32; ++k) bad = bad || open_slot(in, x, k) >= 0;
      if (bad) flag(E_CLAIM, x);
    }
  }
};

}  // namespace korch::dataflow::detail
