// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Output channels of dataflow nodes and the emitters a node's functor writes to: one per lane
// that stages (Emitter, GPU teams), and two for one-lane teams on hosts that write straight into
// the downstream queues (DirectEmitter) or keep one input's outputs in registers (RegisterEmitter).
//
//   using outputs = Outputs<Out<int, 1>, Out<float, 4>>;   // channel 0: <= 1 int per input, ...
//   emit(x);  emit.template to<1>(y);  emit(channel<1>, y);
//   emit.raise(kind, payload);   // a user signal after the items emitted so far (F::raises > 0)
#pragma once

#include <korch/dataflow/signal.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>
#include <utility>

namespace korch::dataflow {

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

// One lane's emitter: stages up to Out::max items per channel for the current input. Item k of
// the lane goes `stride` items after item k - 1, so that with the lanes' first items side by side
// (stride: the run's width) a team writes its k-th items to neighbouring words, not to words
// Out::max apart (on a GPU: shared-memory bank conflicts, or one memory sector per lane).
template <class... Outs>
class Emitter<Outputs<Outs...>> {
 public:
  static constexpr int channels = sizeof...(Outs);
  template <int C>
  using channel_type = typename detail::type_at<C, Outs...>::type::type;
  template <int C>
  static constexpr int channel_max = detail::type_at<C, Outs...>::type::max;

  KOKKOS_INLINE_FUNCTION Emitter(char* const* base, int stride) : stride_(stride) {
    for (int c = 0; c < channels; ++c) {
      base_[c] = base[c];
      count_[c] = 0;
    }
  }

  template <int C>
  KOKKOS_INLINE_FUNCTION void to(const channel_type<C>& value) {
    constexpr int max = detail::type_at<C, Outs...>::type::max;
    if (count_[C] < max) {
      reinterpret_cast<channel_type<C>*>(base_[C])[count_[C]++ * stride_] = value;
    } else {
      overflow_ = true;
    }
  }
  template <int C>
  KOKKOS_INLINE_FUNCTION void operator()(ChannelId<C>, const channel_type<C>& value) {
    to<C>(value);
  }
  KOKKOS_INLINE_FUNCTION void operator()(const channel_type<0>& value) { to<0>(value); }

  // Where this lane records the user signals it raises (at most `max` per input).
  KOKKOS_INLINE_FUNCTION void record_raises(char* base, int max) {
    raise_base_ = base;
    raise_max_ = max;
  }
  // Raises a user signal placed after the items this lane emitted so far on every channel.
  KOKKOS_INLINE_FUNCTION void raise(const UserSignal& s) {
    if (raised_ < raise_max_) {
      RaisedSignal<channels>& r = reinterpret_cast<RaisedSignal<channels>*>(raise_base_)[raised_++];
      r.sig = s;
      for (int c = 0; c < channels; ++c) r.pos[c] = count_[c];
    } else {
      overflow_ = true;
    }
  }
  template <class P>
  KOKKOS_INLINE_FUNCTION void raise(int kind, const P& payload) {
    raise(UserSignal::make(kind, payload));
  }

  KOKKOS_INLINE_FUNCTION int count(int c) const { return count_[c]; }
  KOKKOS_INLINE_FUNCTION int raised() const { return raised_; }
  KOKKOS_INLINE_FUNCTION bool overflow() const { return overflow_; }

 private:
  char* base_[channels];
  int stride_;
  int count_[channels];
  char* raise_base_ = nullptr;
  int raise_max_ = 0;
  int raised_ = 0;
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
  // Nodes that raise signals run with the staging Emitter; here a raise is an overflow.
  KOKKOS_INLINE_FUNCTION void raise(const UserSignal&) { overflow_ = true; }
  template <class P>
  KOKKOS_INLINE_FUNCTION void raise(int, const P&) {
    overflow_ = true;
  }
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
                                       (std::is_default_constructible<typename Outs::type>::value && ...)> {};

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
  // Nodes that raise signals run with the staging Emitter; here a raise is an overflow.
  KOKKOS_INLINE_FUNCTION void raise(const UserSignal&) { overflow_ = 1; }
  template <class P>
  KOKKOS_INLINE_FUNCTION void raise(int, const P&) {
    overflow_ = 1;
  }
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

}  // namespace korch::dataflow
