// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The map node: a functor emitting 0..K items per input on each of its output channels.
#pragma once

#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/emitter.hpp>
#include <korch/dataflow/node.hpp>
#include <korch/dataflow/queue.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace korch::dataflow {

// A node whose functor emits 0..K items per input on each of its channels. A run: every lane
// calls the functor on one input and stages its outputs; a team scan per channel gives each lane
// its offset in the downstream queue; the boss publishes the totals. One-lane teams (host
// spaces) skip staging and scan: see lanes_one_lane. A node that emits at most one item per
// channel and input and raises nothing skips the staging on teams as wide as a run too: see
// lanes_scanned, and docs/dataflow.md, "A run's lanes". A functor that raises user signals
// (F::raises > 0, emit.raise) always stages: each lane records its signals with the counts it had
// emitted, and the boss places them among the run's outputs (commit_raised). A functor with
// on_signal(const UserSignal&, SignalContext&) handles the user signals that reach the node; other
// nodes forward them.
template <class F>
struct MapNode : Node<MapNode<F>> {
  static constexpr NodeKind kind = NodeKind::Map;
  using input_type = typename F::input_type;
  using outputs = typename F::outputs;
  static constexpr int n_channels = outputs::size;
  static constexpr int raises = detail::raises_per_input<F>::value;
  // Outputs kept in registers and placed by the lanes themselves on one lane (lanes_one_lane) and
  // on teams as wide as a run (lanes_scanned).
  static constexpr bool in_registers = single_outputs<outputs>::value && raises == 0;
  static constexpr bool scatters = true;

  // Whether a run on team `t` (runs of up to W items) places its outputs from the staging buffer
  // in scatter(), after a barrier; otherwise lanes() placed them.
  template <class Member>
  KOKKOS_INLINE_FUNCTION static bool scatters_on(const Member& t, int W) {
    if (raises == 0 && t.team_size() == 1) return false;
    return !(in_registers && t.team_size() >= W);
  }
  using raised_type = RaisedSignal<n_channels>;
  F fn;

  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void on_user(const Kernel& kernel, const InstanceState& in, int id, const Signal& s) const {
    if constexpr (detail::handles_signals<F, SignalContext<Kernel>>::value) {
      SignalContext<Kernel> ctx(kernel, in, id, s);
      fn.on_signal(s.user, ctx);
    } else {
      kernel.forward_signal(in, id, s);
    }
  }

  template <class Kernel, class Member>
  KOKKOS_INLINE_FUNCTION void fire(const Kernel& kernel, const Member& t, const InstanceState& in, int id) const {
    kernel.fire_consumer(*this, t, in, id);
  }

  template <class Kernel, class Member>
  KOKKOS_INLINE_FUNCTION void lanes(const Kernel& kernel, const Member& t, const InstanceState& in, int id,
                                    int n) const {
    const auto& nd = kernel.desc(id);
    const DataQueue<input_type> q = kernel.template queue<input_type>(in, id);
    if constexpr (raises == 0) {
      if (t.team_size() == 1) {  // one lane: no staging, scan or barrier (see lanes_one_lane)
        lanes_one_lane(kernel, in, id, n);
        return;
      }
    }
    if constexpr (in_registers) {
      if (t.team_size() >= kernel.vector_width()) {  // one round: a team scan per channel
        lanes_scanned(kernel, t, in, id, n);
        return;
      }
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](const int l) {
      // the stage of a channel: item j of lane l at j * W + l (Emitter)
      char* base[n_channels];
      detail::static_for<n_channels>([&](auto ic) {
        constexpr int c = decltype(ic)::value;
        using T = typename Emitter<outputs>::template channel_type<c>;
        base[c] = in.arena + nd.stage_off[c] + static_cast<std::size_t>(l) * sizeof(T);
      });
      Emitter<outputs> emit(base, kernel.vector_width());
      if constexpr (raises > 0)
        emit.record_raises(in.arena + nd.raise_off + static_cast<std::size_t>(l) * raises * sizeof(raised_type),
                           raises);
      fn(q.at(l), emit);
      for (int c = 0; c < n_channels; ++c) in.state[nd.counts_off[c] + l] = emit.count(c);
      if constexpr (raises > 0) in.state[nd.raised_off + l] = emit.raised();
      if (emit.overflow()) kernel.flag(E_EMIT_OVERFLOW, id);
    });
  }

  // The run's total per channel, which lanes_scanned accumulates: none yet (boss lane, before the
  // lanes).
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void plan_run(const Kernel& kernel, const InstanceState& in, int id, int) const {
    if constexpr (in_registers) {
      const auto& nd = kernel.desc(id);
      for (int c = 0; c < n_channels; ++c) in.state[nd.counts_off[c] + kernel.vector_width()] = 0;
    }
  }

  // A run of a node that emits at most one item per channel and input and raises nothing, on a
  // multi-lane team at least as wide as the run (GPU teams by default): each lane keeps its
  // input's outputs in registers; per channel, a team scan of the lanes' counts gives each lane
  // its place behind the downstream tail (and adds the total to the run's), and the lane writes its
  // output there. One pass, no staging buffer and no barrier between computing and placing.
  // Narrower teams stage instead: there a lane takes several items, and a team scan per item
  // would cost a barrier each (a rendezvous of threads on a host).
  template <class Kernel, class Member>
  KOKKOS_INLINE_FUNCTION void lanes_scanned(const Kernel& kernel, const Member& t, const InstanceState& in, int id,
                                            int n) const {
    const auto& nd = kernel.desc(id);
    const DataQueue<input_type> q = kernel.template queue<input_type>(in, id);
    const int l = t.team_rank();
    RegisterEmitter<outputs> e;
    if (l < n) fn(q.at(l), e);
    detail::static_for<n_channels>([&](auto ic) {  // every lane scans, with or without an item
      constexpr int c = decltype(ic)::value;
      using T = typename RegisterEmitter<outputs>::template channel_type<c>;
      const int count = e.template count<c>();
      const int at = t.team_scan(count, &in.state[nd.counts_off[c] + kernel.vector_width()]);
      if (count > 0) kernel.template queue<T>(in, nd.child[c]).after_tail(at) = e.template value<c>();
    });
    if (e.overflow()) kernel.flag(E_EMIT_OVERFLOW, id);
  }

  // Where a one-lane run writes each channel's outputs: the downstream ring, its capacity and the
  // ring index of its tail, from which the run's outputs go contiguously (into the overhang).
  struct RingTails {
    char* data[n_channels];
    int cap[n_channels];
    int pos[n_channels];
  };

  // A run on a one-lane team (host spaces): the input is read as up to two contiguous spans
  // (split where the ring wraps) and every channel's outputs are written contiguously from its
  // queue's tail into the ring and its overhang; the overhang is wrapped after the run.
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void lanes_one_lane(const Kernel& kernel, const InstanceState& in, int id, int n) const {
    const auto& nd = kernel.desc(id);
    const DataQueue<input_type> q = kernel.template queue<input_type>(in, id);
    const input_type* const src = q.data;
    const int k0 = q.index(0);
    const int n1 = n < q.cap - k0 ? n : q.cap - k0;  // up to the ring's end, then from its start
    // where each channel's outputs start (downstream tail) and whether the overhang fits a run
    RingTails tails;
    bool room = true;
    detail::static_for<n_channels>([&](auto ic) {
      constexpr int c = decltype(ic)::value;
      constexpr int K = Emitter<outputs>::template channel_max<c>;
      const QueueDesc& od = kernel.queue_desc(nd.child[c]);
      const int* qs = in.state + od.state_off;
      tails.data[c] = in.arena + od.data_off;
      tails.cap[c] = od.cap;
      tails.pos[c] = qs[Q_HEAD] + qs[Q_COUNT];
      if (tails.pos[c] >= tails.cap[c]) tails.pos[c] -= tails.cap[c];
      if (od.overhang < n * K) room = false;
    });
    if (!room) {  // cannot happen: one-lane pipelines allocate an overhang of one producer run
      kernel.flag(E_QUEUE_OVERFLOW, id);
      return;
    }
    int ovf = 0;
    if constexpr (single_outputs<outputs>::value) {
      ovf = one_lane_in_registers(kernel, in, nd, src, k0, n1, n, tails);
    } else {
      ovf = one_lane_direct(in, nd, kernel.vector_width(), src, k0, n1, n, tails);
    }
    if (ovf) kernel.flag(E_EMIT_OVERFLOW, id);
  }

  // One-lane run of a node whose channels emit at most one item per input: the functor's outputs
  // stay in registers (RegisterEmitter), then a branch-free pass compacts them. Returns nonzero
  // when the functor emitted more than declared.
  template <class Kernel, class Desc>
  KOKKOS_INLINE_FUNCTION int one_lane_in_registers(const Kernel& kernel, const InstanceState& in, const Desc& nd,
                                                   const input_type* const src, const int k0, const int n1, const int n,
                                                   const RingTails& tails) const {
    const F f = fn;  // a local copy: the functor's fields stay in registers in the loops
    int ovf = 0;
    // Pass 1: every lane's output value and count per channel, into the stage.
    char* stage[n_channels];
    int* counts[n_channels];
    for (int c = 0; c < n_channels; ++c) {
      stage[c] = in.arena + nd.stage_off[c];
      counts[c] = in.state + nd.counts_off[c];
    }
    auto span = [&](const input_type* s, const int l0, const int len) {
      for (int i = 0; i < len; ++i) {
        RegisterEmitter<outputs> e;
        f(s[i], e);
        detail::static_for<n_channels>([&](auto ic) {
          constexpr int c = decltype(ic)::value;
          using T = typename RegisterEmitter<outputs>::template channel_type<c>;
          reinterpret_cast<T*>(stage[c])[l0 + i] = e.template value<c>();
          counts[c][l0 + i] = e.template count<c>();
        });
        ovf |= e.overflow();
      }
    };
    span(src + k0, 0, n1);
    span(src, n1, n - n1);
    // Pass 2: branch-free compaction into the downstream queues, in lane order (a lane
    // without output writes a free slot that the next one overwrites).
    detail::static_for<n_channels>([&](auto ic) {
      constexpr int c = decltype(ic)::value;
      using T = typename RegisterEmitter<outputs>::template channel_type<c>;
      const T* vals = reinterpret_cast<const T*>(stage[c]);
      const int* cnt = counts[c];
      T* const ring = reinterpret_cast<T*>(tails.data[c]);
      T* const out = ring + tails.pos[c];
      int p = 0;
      for (int l = 0; l < n; ++l) {
        out[p] = vals[l];
        p += cnt[l];
      }
      wrap_overhang(ring, tails.cap[c], tails.pos[c], p);
      in.state[nd.counts_off[c] + kernel.vector_width()] = p;
    });
    return ovf;
  }

  // One-lane run of a node with a channel that may emit several items per input: the functor
  // writes straight into the downstream rings (DirectEmitter). Returns nonzero on overflow.
  template <class Desc>
  KOKKOS_INLINE_FUNCTION int one_lane_direct(const InstanceState& in, const Desc& nd, const int W,
                                             const input_type* const src, const int k0, const int n1, const int n,
                                             const RingTails& tails) const {
    const F f = fn;  // a local copy: the functor's fields stay in registers in the loops
    char* out[n_channels];
    detail::static_for<n_channels>([&](auto ic) {
      constexpr int c = decltype(ic)::value;
      using T = typename DirectEmitter<outputs>::template channel_type<c>;
      out[c] = reinterpret_cast<char*>(reinterpret_cast<T*>(tails.data[c]) + tails.pos[c]);
    });
    DirectEmitter<outputs> emit(out);
    for (int l = 0; l < n1; ++l) {
      emit.next_input();
      f(src[k0 + l], emit);
    }
    for (int l = n1; l < n; ++l) {
      emit.next_input();
      f(src[l - n1], emit);
    }
    detail::static_for<n_channels>([&](auto ic) {
      constexpr int c = decltype(ic)::value;
      using T = typename DirectEmitter<outputs>::template channel_type<c>;
      wrap_overhang(reinterpret_cast<T*>(tails.data[c]), tails.cap[c], tails.pos[c], emit.total(c));
      in.state[nd.counts_off[c] + W] = emit.total(c);
    });
    return emit.overflow() ? 1 : 0;
  }

  // The staged outputs of a run into the children's queues; the kernel calls it only where
  // scatters_on(t, W).
  template <class Kernel, class Member>
  KOKKOS_INLINE_FUNCTION void scatter(const Kernel& kernel, const Member& t, const InstanceState& in, int id,
                                      int n) const {
    const auto& nd = kernel.desc(id);
    detail::static_for<n_channels>([&](auto ic) {
      constexpr int c = decltype(ic)::value;
      using T = typename Emitter<outputs>::template channel_type<c>;
      const int W = kernel.vector_width();
      const T* stage = reinterpret_cast<const T*>(in.arena + nd.stage_off[c]);
      int* counts = in.state + nd.counts_off[c];
      const DataQueue<T> out = kernel.template queue<T>(in, nd.child[c]);
      Kokkos::parallel_scan(Kokkos::TeamThreadRange(t, n), [&](const int l, int& offset, const bool final) {
        const int cnt = counts[l];
        if (final) {
          for (int j = 0; j < cnt; ++j) out.after_tail(offset + j) = stage[j * W + l];
          if (l == n - 1) counts[kernel.vector_width()] = offset + cnt;
        }
        offset += cnt;
      });
    });
  }

  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void commit_run(const Kernel& kernel, const InstanceState& in, int id, int n) const {
    if constexpr (raises > 0) {
      commit_raised(kernel, in, id, n);
      return;
    }
    const auto& nd = kernel.desc(id);
    for (int c = 0; c < n_channels; ++c)
      kernel.add_items(in, nd.child[c], in.state[nd.counts_off[c] + kernel.vector_width()]);
  }

  // The boss places a raising node's run: in lane order, each raised signal goes to every channel
  // after the items emitted before it (the lanes before it, and its own lane's up to the raise).
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void commit_raised(const Kernel& kernel, const InstanceState& in, int id, int n) const {
    const auto& nd = kernel.desc(id);
    const raised_type* rec = reinterpret_cast<const raised_type*>(in.arena + nd.raise_off);
    int lane_start[n_channels] = {};
    int placed[n_channels] = {};
    for (int l = 0; l < n; ++l) {
      const int k = in.state[nd.raised_off + l];
      for (int j = 0; j < k; ++j) {
        const raised_type& r = rec[l * raises + j];
        for (int c = 0; c < n_channels; ++c) {
          const int at = lane_start[c] + r.pos[c];
          kernel.add_items(in, nd.child[c], at - placed[c]);
          placed[c] = at;
          kernel.emit_signal(in, nd.child[c], Signal::of_user(r.sig));
        }
      }
      for (int c = 0; c < n_channels; ++c) lane_start[c] += in.state[nd.counts_off[c] + l];
    }
    for (int c = 0; c < n_channels; ++c)
      kernel.add_items(in, nd.child[c], in.state[nd.counts_off[c] + kernel.vector_width()] - placed[c]);
  }
};

}  // namespace korch::dataflow
