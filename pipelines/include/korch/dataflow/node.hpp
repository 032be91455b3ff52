// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The base of every dataflow node type, dataflow::Node<Derived> (CRTP): signals are dispatched on
// their tag to handlers the node type may hide with its own (on_boundary, on_user, on_flush_done)
// - static dispatch, no virtual calls, so the same node runs inside Kokkos kernels on host and GPU.
// The node kinds (source_node.hpp, map_node.hpp, enumerate_node.hpp, aggregate_node.hpp,
// sink_node.hpp) fire through the pipeline kernel (pipeline_kernel.hpp), which passes itself as
// `kernel` to every hook.
//
// User code supplies device-callable functors (KOKKOS_INLINE_FUNCTION members, trivially
// copyable item types):
//
//   source      ArraySource (from_view) or GeneratorSource (generate<T>(n, fn)), fn(i) -> T
//   node        F::input_type, F::outputs = Outputs<Out<T0, K0>, Out<T1, K1>, ...> and
//               template <class Emit> void operator()(const input_type&, Emit& emit) const,
//               which calls emit(x) (channel 0) or emit.template to<C>(x) / emit(channel<C>, x)
//               at most K_C times per input on channel C. With `static constexpr int raises = R`
//               it may also call emit.raise(kind, payload) at most R times per input: a user
//               signal placed after the items emitted so far (docs/dataflow.md, "User signals").
//               An optional template <class Ctx> void on_signal(const UserSignal&, Ctx&) const
//               handles the user signals reaching the node (SignalContext); without it they are
//               forwarded. Sinks count them and log them (Pipeline::signals).
//   enumerate   E::parent_type, E::element_type, int count(const parent_type&) const,
//               element_type element(const parent_type&, int i) const
//   aggregate   A::input_type, A::parent_type, A::accumulator_type, A::output_type,
//               accumulator_type init(const parent_type&) const,
//               void add(accumulator_type&, const input_type&) const,
//               output_type finish(const parent_type&, const accumulator_type&) const
//   Sources, enumerates and aggregates raise user signals with `static constexpr int raises = R`
//   and a hook called on the boss lane after each output, which calls raise.raise(kind, payload)
//   at most R times (a Raiser; the signals follow that output):
//     source     template <class Raise> void raise_after(long i, Raise&) const      (item i)
//     enumerate  template <class Raise> void raise_after(const parent_type&, int i, Raise&) const
//     aggregate  template <class Raise> void raise_after(const parent_type&, const accumulator_type&,
//                                                        Raise&) const              (the parent's output)
//   sink        items of type T are gathered into an output array
#pragma once

#include <korch/dataflow/error_bits.hpp>
#include <korch/dataflow/instance_state.hpp>
#include <korch/dataflow/signal.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>
#include <utility>

namespace korch::dataflow {

// What a node's user-signal handler (F::on_signal(const UserSignal&, Ctx&)) may do, on the boss
// lane, when the signal reaches the node in order with its input: read how many input items of
// its instance it consumed before the signal, and pass on the signal or raise one of its own
// (at most MAX_SIGNALS_PER_SIG; a signal neither forwarded nor replaced ends here).
template <class Kernel>
class SignalContext {
 public:
  KOKKOS_INLINE_FUNCTION SignalContext(const Kernel& kernel, const InstanceState& in, int id, const Signal& s)
      : kernel_(kernel), in_(in), id_(id), signal_(s) {}
  KOKKOS_INLINE_FUNCTION long long consumed() const { return kernel_.stat(in_, id_, detail::ST_LANES); }
  KOKKOS_INLINE_FUNCTION int instance() const { return in_.rank; }
  KOKKOS_INLINE_FUNCTION void forward() { issue(signal_); }
  KOKKOS_INLINE_FUNCTION void raise(const UserSignal& u) { issue(Signal::of_user(u)); }
  template <class P>
  KOKKOS_INLINE_FUNCTION void raise(int kind, const P& payload) {
    raise(UserSignal::make(kind, payload));
  }

 private:
  KOKKOS_INLINE_FUNCTION void issue(const Signal& s) {
    if (issued_++ >= MAX_SIGNALS_PER_SIG) {
      kernel_.flag(E_SIGNAL_OVERFLOW, id_);
      return;
    }
    kernel_.forward_signal(in_, id_, s);
  }
  const Kernel& kernel_;
  const InstanceState& in_;
  int id_;
  Signal signal_;
  int issued_ = 0;
};

// What a source, enumerate or aggregate hook (raise_after) raises with, on the boss lane: each
// signal goes on every output edge right after the output the hook follows, with the credit of the
// items emitted before it; more than `max` per output is reported (E_EMIT_OVERFLOW).
template <class Kernel>
class Raiser {
 public:
  KOKKOS_INLINE_FUNCTION Raiser(const Kernel& kernel, const InstanceState& in, int id, int max)
      : kernel_(kernel), in_(in), id_(id), max_(max) {}
  KOKKOS_INLINE_FUNCTION void raise(const UserSignal& u) {
    if (raised_++ >= max_) {
      kernel_.flag(E_EMIT_OVERFLOW, id_);
      return;
    }
    kernel_.forward_signal(in_, id_, Signal::of_user(u));
  }
  template <class P>
  KOKKOS_INLINE_FUNCTION void raise(int kind, const P& payload) {
    raise(UserSignal::make(kind, payload));
  }

 private:
  const Kernel& kernel_;
  const InstanceState& in_;
  int id_;
  int max_;
  int raised_ = 0;
};

namespace detail {
// Whether F handles user signals: void on_signal(const UserSignal&, Ctx&) const.
template <class F, class Ctx, class = void>
struct handles_signals : std::false_type {};
template <class F, class Ctx>
struct handles_signals<
    F, Ctx,
    std::void_t<decltype(std::declval<const F&>().on_signal(std::declval<const UserSignal&>(), std::declval<Ctx&>()))>>
    : std::true_type {};
// F::raises: the most user signals F raises per input (0 when F does not say).
template <class F, class = void>
struct raises_per_input : std::integral_constant<int, 0> {};
template <class F>
struct raises_per_input<F, std::void_t<decltype(F::raises)>> : std::integral_constant<int, F::raises> {};
}  // namespace detail

template <class Derived>
struct Node {
  // A signal is consumed by calling the node's signal handler, which dispatches on the tag.
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void handle_signal(const Kernel& kernel, const InstanceState& in, int id,
                                            const Signal& s) const {
    const Derived& self = static_cast<const Derived&>(*this);
    switch (s.tag) {
      case Tag::Boundary: self.on_boundary(kernel, in, id, s); break;
      default: self.on_user(kernel, in, id, s); break;
    }
  }
  // Defaults: pass the signal on to every output channel (credit recomputed per edge).
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void on_boundary(const Kernel& kernel, const InstanceState& in, int id,
                                          const Signal& s) const {
    kernel.forward_signal(in, id, s);
  }
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void on_user(const Kernel& kernel, const InstanceState& in, int id, const Signal& s) const {
    kernel.forward_signal(in, id, s);
  }
  // Called when the node completes a flush of region status `status` (before it propagates).
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void on_flush_done(const Kernel&, const InstanceState&, int, int) const {}
  // Consumer hooks (see PipelineKernel::fire_consumer); defaults do nothing.
  static constexpr bool scatters = false;
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void plan_run(const Kernel&, const InstanceState&, int, int) const {}
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void commit_run(const Kernel&, const InstanceState&, int, int) const {}
};

}  // namespace korch::dataflow
