// Node types of dataflow pipelines. Every node type derives from dataflow::Node<Derived> (CRTP):
// signals are dispatched on their tag to handlers the node type may hide with its own
// (on_boundary, on_user, on_flush_done) - static dispatch, no virtual calls, so the same node
// runs inside Kokkos kernels on host and GPU.
//
// User code supplies device-callable functors (KOKKOS_INLINE_FUNCTION members, trivially
// copyable item types):
//
//   source      ArraySource (from_view) or GeneratorSource (generate<T>(n, fn)), fn(i) -> T
//   node        F::input_type, F::outputs = Outputs<Out<T0, K0>, Out<T1, K1>, ...> and
//               template <class Emit> void operator()(const input_type&, Emit& emit) const,
//               which calls emit(x) (channel 0) or emit.template to<C>(x) / emit(channel<C>, x)
//               at most K_C times per input on channel C.
//   enumerate   E::parent_type, E::element_type, int count(const parent_type&) const,
//               element_type element(const parent_type&, int i) const
//   aggregate   A::input_type, A::parent_type, A::accumulator_type, A::output_type,
//               accumulator_type init(const parent_type&) const,
//               void add(accumulator_type&, const input_type&) const,
//               output_type finish(const parent_type&, const accumulator_type&) const
//   sink        items of type T are gathered into an output array
#pragma once

#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/queue.hpp>
#include <korch/dataflow/signal.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace korch::dataflow {

// ---------------------------------------------------------------------------------------------
// Output channel declarations and the emitter a node's functor writes to.

template <class T, int MaxPerInput>
struct Out {
  static_assert(MaxPerInput >= 1, "a channel emits at least one item per input at most");
  using type = T;
  static constexpr int max = MaxPerInput;
};

template <class... Outs>
struct Outputs {
  static constexpr int size = sizeof...(Outs);
};

template <int C>
struct ChannelId {
  static constexpr int value = C;
};
template <int C>
inline constexpr ChannelId<C> channel{};

namespace detail {
template <int I, class... Ts>
struct type_at;
template <class T, class... Ts>
struct type_at<0, T, Ts...> {
  using type = T;
};
template <int I, class T, class... Ts>
struct type_at<I, T, Ts...> {
  using type = typename type_at<I - 1, Ts...>::type;
};

// Calls fn(std::integral_constant<int, I>{}) for I = 0 .. C-1.
template <int I, int C>
struct StaticFor {
  template <class Fn>
  KOKKOS_INLINE_FUNCTION static void run(const Fn& fn) {
    if constexpr (I < C) {
      fn(std::integral_constant<int, I>{});
      StaticFor<I + 1, C>::run(fn);
    }
  }
};
template <int C, class Fn>
KOKKOS_INLINE_FUNCTION void static_for(const Fn& fn) {
  StaticFor<0, C>::run(fn);
}
}  // namespace detail

template <class OutputsT>
class Emitter;

// One lane's emitter: stages up to Out::max items per channel for the current input.
template <class... Outs>
class Emitter<Outputs<Outs...>> {
 public:
  static constexpr int channels = sizeof...(Outs);
  template <int C>
  using channel_type = typename detail::type_at<C, Outs...>::type::type;
  template <int C>
  static constexpr int channel_max = detail::type_at<C, Outs...>::type::max;

  KOKKOS_INLINE_FUNCTION explicit Emitter(char* const* base) {
    for (int c = 0; c < channels; ++c) {
      base_[c] = base[c];
      count_[c] = 0;
    }
  }

  template <int C>
  KOKKOS_INLINE_FUNCTION void to(const channel_type<C>& value) {
    constexpr int max = detail::type_at<C, Outs...>::type::max;
    if (count_[C] < max) {
      reinterpret_cast<channel_type<C>*>(base_[C])[count_[C]++] = value;
    } else {
      overflow_ = true;
    }
  }
  template <int C>
  KOKKOS_INLINE_FUNCTION void operator()(ChannelId<C>, const channel_type<C>& value) {
    to<C>(value);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const channel_type<0>& value) { to<0>(value); }

  KOKKOS_INLINE_FUNCTION int count(int c) const { return count_[c]; }
  KOKKOS_INLINE_FUNCTION bool overflow() const { return overflow_; }

 private:
  char* base_[channels];
  int count_[channels];
  bool overflow_ = false;
};

// The emitter of a one-lane team (host spaces) for nodes with a channel that may emit more than
// one item per input: writes straight into the downstream ring queues, contiguously from each
// queue's tail (a run may extend into the queue's overhang, see wrap_overhang), so the hot path
// has neither staging nor a per-item wrap check.
template <class OutputsT>
class DirectEmitter;

template <class... Outs>
class DirectEmitter<Outputs<Outs...>> {
 public:
  static constexpr int channels = sizeof...(Outs);
  template <int C>
  using channel_type = typename detail::type_at<C, Outs...>::type::type;

  // out[c]: where channel c's first item of the run goes
  KOKKOS_INLINE_FUNCTION explicit DirectEmitter(char* const* out) {
    for (int c = 0; c < channels; ++c) {
      out_[c] = out[c];
      total_[c] = 0;
      limit_[c] = 0;
    }
  }
  KOKKOS_INLINE_FUNCTION void next_input() {
    detail::static_for<channels>([&](auto ic) {
      constexpr int c = decltype(ic)::value;
      limit_[c] = total_[c] + detail::type_at<c, Outs...>::type::max;
    });
  }
  template <int C>
  KOKKOS_INLINE_FUNCTION void to(const channel_type<C>& value) {
    if (total_[C] < limit_[C]) {
      reinterpret_cast<channel_type<C>*>(out_[C])[total_[C]++] = value;
    } else {
      overflow_ = true;
    }
  }
  template <int C>
  KOKKOS_INLINE_FUNCTION void operator()(ChannelId<C>, const channel_type<C>& value) {
    to<C>(value);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const channel_type<0>& value) { to<0>(value); }
  KOKKOS_INLINE_FUNCTION int total(int c) const { return total_[c]; }
  KOKKOS_INLINE_FUNCTION bool overflow() const { return overflow_; }

 private:
  char* out_[channels];
  int total_[channels];
  int limit_[channels];  // total_ + the channel's maximum at the start of the current input
  bool overflow_ = false;
};

namespace detail {
template <class... Outs>
struct RegisterSlots;
template <>
struct RegisterSlots<> {};
template <class O, class... Rest>
struct RegisterSlots<O, Rest...> {
  typename O::type value{};
  int n = 0;
  RegisterSlots<Rest...> rest;
};
template <int C>
struct SlotAt {
  template <class S>
  KOKKOS_INLINE_FUNCTION static auto& get(S& s) {
    return SlotAt<C - 1>::get(s.rest);
  }
};
template <>
struct SlotAt<0> {
  template <class S>
  KOKKOS_INLINE_FUNCTION static S& get(S& s) {
    return s;
  }
};
}  // namespace detail

// Whether every channel emits at most one item per input (and its items are default
// constructible): such nodes use the RegisterEmitter on one-lane teams.
template <class OutputsT>
struct single_outputs : std::false_type {};
template <class... Outs>
struct single_outputs<Outputs<Outs...>>
    : std::integral_constant<bool, ((Outs::max == 1) && ...) &&
                                       (std::is_default_constructible<typename Outs::type>::value &&
                                        ...)> {};

// The emitter of a one-lane team for nodes whose channels emit at most one item per input: the
// outputs of one input stay in registers (no store depends on the functor's decisions), so the
// loop over a contiguous input span has no branches left after if-conversion and the compiler can
// vectorize it; a second, branch-free pass compacts the outputs into the downstream queues.
template <class OutputsT>
class RegisterEmitter;

template <class... Outs>
class RegisterEmitter<Outputs<Outs...>> {
 public:
  static constexpr int channels = sizeof...(Outs);
  template <int C>
  using channel_type = typename detail::type_at<C, Outs...>::type::type;

  template <int C>
  KOKKOS_INLINE_FUNCTION void to(const channel_type<C>& value) {
    auto& s = detail::SlotAt<C>::get(slots_);
    if (s.n == 0) {
      s.value = value;
      s.n = 1;
    } else {
      overflow_ = 1;
    }
  }
  template <int C>
  KOKKOS_INLINE_FUNCTION void operator()(ChannelId<C>, const channel_type<C>& value) {
    to<C>(value);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const channel_type<0>& value) { to<0>(value); }
  template <int C>
  KOKKOS_INLINE_FUNCTION const channel_type<C>& value() const {
    return detail::SlotAt<C>::get(slots_).value;
  }
  template <int C>
  KOKKOS_INLINE_FUNCTION int count() const {
    return detail::SlotAt<C>::get(slots_).n;
  }
  KOKKOS_INLINE_FUNCTION int overflow() const { return overflow_; }

 private:
  detail::RegisterSlots<Outs...> slots_;
  int overflow_ = 0;
};

// ---------------------------------------------------------------------------------------------
// The CRTP base: signal dispatch on tags, default handlers.

template <class Derived>
struct Node {
  // A signal is consumed by calling the node's signal handler, which dispatches on the tag.
  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void handle_signal(const M& m, const Inst& in, int id,
                                            const Signal& s) const {
    const Derived& self = static_cast<const Derived&>(*this);
    switch (s.tag) {
      case Tag::Boundary: self.on_boundary(m, in, id, s); break;
      default: self.on_user(m, in, id, s); break;
    }
  }
  // Defaults: pass the signal on to every output channel (credit recomputed per edge).
  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void on_boundary(const M& m, const Inst& in, int id,
                                          const Signal& s) const {
    m.forward_signal(in, id, s);
  }
  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void on_user(const M& m, const Inst& in, int id, const Signal& s) const {
    m.forward_signal(in, id, s);
  }
  // Called when the node completes a flush of region status `status` (before it propagates).
  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void on_flush_done(const M&, const Inst&, int, int) const {}
  // Consumer hooks (see Machine::fire_consumer); defaults do nothing.
  static constexpr bool scatters = false;
  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void plan_run(const M&, const Inst&, int, int) const {}
  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void commit_run(const M&, const Inst&, int, int) const {}
};

// ---------------------------------------------------------------------------------------------
// Sources

template <class T, class... Props>
struct ArraySource {
  using value_type = T;
  Kokkos::View<const T*, Props...> data;
  long size() const { return static_cast<long>(data.extent(0)); }
  KOKKOS_INLINE_FUNCTION T operator()(long i) const { return data(i); }
};

template <class T, class... Props>
ArraySource<T, Props...> from_view(const Kokkos::View<T*, Props...>& v) {
  return ArraySource<T, Props...>{v};
}
template <class T, class... Props>
ArraySource<T, Props...> from_view(const Kokkos::View<const T*, Props...>& v) {
  return ArraySource<T, Props...>{v};
}

template <class T, class Fn>
struct GeneratorSource {
  using value_type = T;
  long n;
  Fn fn;
  long size() const { return n; }
  KOKKOS_INLINE_FUNCTION T operator()(long i) const { return fn(i); }
};

template <class T, class Fn>
GeneratorSource<T, Fn> generate(long n, Fn fn) {
  return GeneratorSource<T, Fn>{n, fn};
}

// ---------------------------------------------------------------------------------------------
// Node kinds. Their firing logic lives in pipeline.hpp (Machine), parameterized on these.

// Error bits raised inside the kernel and reported as korch::Error after it.
enum ErrorBit : int {
  E_CREDIT = 1,          // a signal was issued with more credit than its data queue holds
  E_QUEUE_OVERFLOW = 2,  // a data queue overflowed (protocol violation)
  E_SIGNAL_OVERFLOW = 4, // a signal queue overflowed (protocol violation)
  E_EMIT_OVERFLOW = 8,   // a node emitted more than its declared maximum per input
  E_SINK_OVERFLOW = 16,  // a sink received more items than its capacity
  E_CLAIM = 32,          // at termination something was still queued, active or held
  E_NO_PARENT = 64,      // an aggregate received an item outside any open parent
  E_STALL = 128          // a node stayed fireable without making progress
};

template <class Src>
struct SourceNode : Node<SourceNode<Src>> {
  static constexpr NodeKind kind = NodeKind::Source;
  using output_type = typename Src::value_type;
  static constexpr int n_channels = 1;
  Src src;

  template <class M, class Member, class Inst>
  KOKKOS_INLINE_FUNCTION void fire(const M& m, const Member& t, const Inst& in, int id) const {
    m.fire_source(*this, t, in, id);
  }
};

// A node whose functor emits 0..K items per input on each of its channels. A run: every lane
// calls the functor on one input and stages its outputs; a team scan per channel gives each lane
// its offset in the downstream queue; the boss publishes the totals. One-lane teams (host
// spaces) skip staging and scan: see lanes_one_lane.
template <class F>
struct MapNode : Node<MapNode<F>> {
  static constexpr NodeKind kind = NodeKind::Map;
  using input_type = typename F::input_type;
  using outputs = typename F::outputs;
  static constexpr int n_channels = outputs::size;
  static constexpr bool scatters = true;
  F fn;

  template <class M, class Member, class Inst>
  KOKKOS_INLINE_FUNCTION void fire(const M& m, const Member& t, const Inst& in, int id) const {
    m.fire_consumer(*this, t, in, id);
  }

  template <class M, class Member, class Inst>
  KOKKOS_INLINE_FUNCTION void lanes(const M& m, const Member& t, const Inst& in, int id,
                                    int n) const {
    const auto& nd = m.desc(id);
    const DataQueue<input_type> q = m.template queue<input_type>(in, id);
    if (t.team_size() == 1) {  // one lane: no staging, scan or barrier (see lanes_one_lane)
      lanes_one_lane(m, in, id, n);
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](const int l) {
      char* base[n_channels];
      detail::static_for<n_channels>([&](auto ic) {
        constexpr int c = decltype(ic)::value;
        using T = typename Emitter<outputs>::template channel_type<c>;
        constexpr int K = Emitter<outputs>::template channel_max<c>;
        base[c] = in.arena + nd.stage_off[c] + static_cast<std::size_t>(l) * K * sizeof(T);
      });
      Emitter<outputs> emit(base);
      fn(q.at(l), emit);
      for (int c = 0; c < n_channels; ++c) in.state[nd.counts_off[c] + l] = emit.count(c);
      if (emit.overflow()) m.flag(E_EMIT_OVERFLOW, id);
    });
  }

  // A run on a one-lane team (host spaces): the input is read as up to two contiguous spans
  // (split where the ring wraps) and every channel's outputs are written contiguously from its
  // queue's tail into the ring and its overhang; the overhang is wrapped after the run.
  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void lanes_one_lane(const M& m, const Inst& in, int id, int n) const {
    const auto& nd = m.desc(id);
    const DataQueue<input_type> q = m.template queue<input_type>(in, id);
    const F f = fn;  // a local copy: the functor's fields stay in registers in the loops
    const input_type* const src = q.data;
    const int k0 = q.index(0);
    const int n1 = n < q.cap - k0 ? n : q.cap - k0;  // up to the ring's end, then from its start
    // where each channel's outputs start (downstream tail) and whether the overhang fits a run
    char* data[n_channels];
    int cap[n_channels], pos[n_channels];
    bool room = true;
    detail::static_for<n_channels>([&](auto ic) {
      constexpr int c = decltype(ic)::value;
      constexpr int K = Emitter<outputs>::template channel_max<c>;
      const QueueDesc& od = m.queue_desc(nd.child[c]);
      const int* qs = in.state + od.state_off;
      data[c] = in.arena + od.data_off;
      cap[c] = od.cap;
      pos[c] = qs[Q_HEAD] + qs[Q_COUNT];
      if (pos[c] >= cap[c]) pos[c] -= cap[c];
      if (od.overhang < n * K) room = false;
    });
    if (!room) {  // cannot happen: one-lane pipelines allocate an overhang of one producer run
      m.flag(E_QUEUE_OVERFLOW, id);
      return;
    }
    int ovf = 0;
    if constexpr (single_outputs<outputs>::value) {
      // Pass 1: every lane's output value and count per channel, into the stage (the outputs
      // are kept in registers during the functor call, see RegisterEmitter).
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
        T* const ring = reinterpret_cast<T*>(data[c]);
        T* const out = ring + pos[c];
        int p = 0;
        for (int l = 0; l < n; ++l) {
          out[p] = vals[l];
          p += cnt[l];
        }
        wrap_overhang(ring, cap[c], pos[c], p);
        in.state[nd.counts_off[c] + m.vector_width()] = p;
      });
    } else {
      char* out[n_channels];
      detail::static_for<n_channels>([&](auto ic) {
        constexpr int c = decltype(ic)::value;
        using T = typename DirectEmitter<outputs>::template channel_type<c>;
        out[c] = reinterpret_cast<char*>(reinterpret_cast<T*>(data[c]) + pos[c]);
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
      ovf = emit.overflow();
      detail::static_for<n_channels>([&](auto ic) {
        constexpr int c = decltype(ic)::value;
        using T = typename DirectEmitter<outputs>::template channel_type<c>;
        wrap_overhang(reinterpret_cast<T*>(data[c]), cap[c], pos[c], emit.total(c));
        in.state[nd.counts_off[c] + m.vector_width()] = emit.total(c);
      });
    }
    if (ovf) m.flag(E_EMIT_OVERFLOW, id);
  }

  template <class M, class Member, class Inst>
  KOKKOS_INLINE_FUNCTION void scatter(const M& m, const Member& t, const Inst& in, int id,
                                      int n) const {
    if (t.team_size() == 1) return;  // lanes() already wrote the outputs
    const auto& nd = m.desc(id);
    detail::static_for<n_channels>([&](auto ic) {
      constexpr int c = decltype(ic)::value;
      using T = typename Emitter<outputs>::template channel_type<c>;
      constexpr int K = Emitter<outputs>::template channel_max<c>;
      const T* stage = reinterpret_cast<const T*>(in.arena + nd.stage_off[c]);
      int* counts = in.state + nd.counts_off[c];
      const DataQueue<T> out = m.template queue<T>(in, nd.child[c]);
      Kokkos::parallel_scan(Kokkos::TeamThreadRange(t, n),
                            [&](const int l, int& offset, const bool final) {
                              const int cnt = counts[l];
                              if (final) {
                                for (int j = 0; j < cnt; ++j)
                                  out.after_tail(offset + j) = stage[l * K + j];
                                if (l == n - 1) counts[m.vector_width()] = offset + cnt;
                              }
                              offset += cnt;
                            });
    });
  }

  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void commit_run(const M& m, const Inst& in, int id, int) const {
    const auto& nd = m.desc(id);
    for (int c = 0; c < n_channels; ++c)
      m.add_items(in, nd.child[c], in.state[nd.counts_off[c] + m.vector_width()]);
  }

};

// The enumerate node: a run takes the next parent (by value, into a parent buffer slot whose
// reference count is the number of terminal nodes of its region) and issues the Boundary signal,
// or continues the current parent; it emits up to one vector width of elements per run.
template <class E>
struct EnumerateNode : Node<EnumerateNode<E>> {
  static constexpr NodeKind kind = NodeKind::Enumerate;
  using input_type = typename E::parent_type;
  using parent_type = typename E::parent_type;
  using element_type = typename E::element_type;
  static constexpr int n_channels = 1;
  E fn;

  template <class M, class Member, class Inst>
  KOKKOS_INLINE_FUNCTION void fire(const M& m, const Member& t, const Inst& in, int id) const {
    m.fire_enumerate(*this, t, in, id);
  }
};

// A terminal node of an enumeration region: accumulates the elements of the current parent and
// emits finish(parent, acc) when the parent closes (next Boundary of its region, a Boundary of an
// enclosing region, or the completion of a flush of its region or an enclosing one).
template <class A>
struct AggregateNode : Node<AggregateNode<A>> {
  static constexpr NodeKind kind = NodeKind::Aggregate;
  using input_type = typename A::input_type;
  using parent_type = typename A::parent_type;
  using accumulator_type = typename A::accumulator_type;
  using output_type = typename A::output_type;
  static constexpr int n_channels = 1;
  A fn;

  template <class M, class Member, class Inst>
  KOKKOS_INLINE_FUNCTION void fire(const M& m, const Member& t, const Inst& in, int id) const {
    m.fire_consumer(*this, t, in, id);
  }

  // Accumulation is sequential on the boss lane, in queue order (the items of one run all belong
  // to one parent, since runs never cross a signal).
  template <class M, class Member, class Inst>
  KOKKOS_INLINE_FUNCTION void lanes(const M& m, const Member& t, const Inst& in, int id,
                                    int n) const {
    Kokkos::single(Kokkos::PerTeam(t), [&]() {
      const auto& nd = m.desc(id);
      if (m.open_slot(in, id, nd.closes) < 0) {
        m.flag(E_NO_PARENT, id);
        return;
      }
      const DataQueue<input_type> q = m.template queue<input_type>(in, id);
      accumulator_type& acc = *reinterpret_cast<accumulator_type*>(in.arena + nd.arena_off);
      for (int l = 0; l < n; ++l) fn.add(acc, q.at(l));
    });
  }

  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void on_boundary(const M& m, const Inst& in, int id,
                                          const Signal& s) const {
    m.terminal_boundary(in, id, s, closer<M, Inst>{this, &m, &in, id},
                        opener<M, Inst>{this, &m, &in, id});
  }
  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void on_flush_done(const M& m, const Inst& in, int id,
                                            int status) const {
    m.terminal_flush(in, id, status, closer<M, Inst>{this, &m, &in, id});
  }

  template <class M, class Inst>
  struct closer {
    const AggregateNode* self;
    const M* m;
    const Inst* in;
    int id;
    KOKKOS_INLINE_FUNCTION void operator()(int region, int slot) const {
      const auto& nd = m->desc(id);
      const parent_type& p = m->template parent_at<parent_type>(*in, region, slot);
      const accumulator_type& acc =
          *reinterpret_cast<const accumulator_type*>(in->arena + nd.arena_off);
      m->push_item(*in, nd.child[0], self->fn.finish(p, acc));
    }
  };
  template <class M, class Inst>
  struct opener {
    const AggregateNode* self;
    const M* m;
    const Inst* in;
    int id;
    KOKKOS_INLINE_FUNCTION void operator()(int region, int slot) const {
      const auto& nd = m->desc(id);
      accumulator_type& acc = *reinterpret_cast<accumulator_type*>(in->arena + nd.arena_off);
      acc = self->fn.init(m->template parent_at<parent_type>(*in, region, slot));
    }
  };
};

// Gathers items into an output array with one atomic per run: order is kept within an instance.
// A sink is a terminal of every region it lies in: it releases parents like an aggregate.
template <class T>
struct SinkNode : Node<SinkNode<T>> {
  static constexpr NodeKind kind = NodeKind::Sink;
  using input_type = T;
  static constexpr int n_channels = 0;

  template <class M, class Member, class Inst>
  KOKKOS_INLINE_FUNCTION void fire(const M& m, const Member& t, const Inst& in, int id) const {
    m.fire_consumer(*this, t, in, id);
  }
  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void plan_run(const M& m, const Inst& in, int id, int n) const {
    m.sink_claim(in, id, n);
  }
  template <class M, class Member, class Inst>
  KOKKOS_INLINE_FUNCTION void lanes(const M& m, const Member& t, const Inst& in, int id,
                                    int n) const {
    const DataQueue<T> q = m.template queue<T>(in, id);
    const long long base = in.wide[0];
    const auto& nd = m.desc(id);
    T* out = m.template sink_data<T>(nd.sink);
    int* origin = m.sink_origin(nd.sink);
    const long long cap = m.sink_capacity(nd.sink);
    const T* src = q.data;
    const int qcap = q.cap;
    const int head = q.index(0);
    const int rank = in.rank;
    if (t.team_size() == 1 && base + n <= cap) {  // one lane: contiguous copies, split at the wrap
      const int n1 = n < qcap - head ? n : qcap - head;
      T* const o = out + base;
      for (int l = 0; l < n1; ++l) o[l] = src[head + l];
      for (int l = n1; l < n; ++l) o[l] = src[l - n1];
      int* const org = origin + base;
      for (int l = 0; l < n; ++l) org[l] = rank;
      return;
    }
    Kokkos::parallel_for(Kokkos::TeamThreadRange(t, n), [&](const int l) {
      const long long k = base + l;
      if (k < cap) {
        const int j = head + l;
        out[k] = src[j >= qcap ? j - qcap : j];
        origin[k] = rank;
      } else {
        m.flag(E_SINK_OVERFLOW, id);
      }
    });
  }
  struct nothing {
    KOKKOS_INLINE_FUNCTION void operator()(int, int) const {}
  };
  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void on_boundary(const M& m, const Inst& in, int id,
                                          const Signal& s) const {
    m.terminal_boundary(in, id, s, nothing{}, nothing{});
  }
  template <class M, class Inst>
  KOKKOS_INLINE_FUNCTION void on_flush_done(const M& m, const Inst& in, int id,
                                            int status) const {
    m.terminal_flush(in, id, status, nothing{});
  }
};

}  // namespace korch::dataflow
