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
//               at most K_C times per input on channel C.
//   enumerate   E::parent_type, E::element_type, int count(const parent_type&) const,
//               element_type element(const parent_type&, int i) const
//   aggregate   A::input_type, A::parent_type, A::accumulator_type, A::output_type,
//               accumulator_type init(const parent_type&) const,
//               void add(accumulator_type&, const input_type&) const,
//               output_type finish(const parent_type&, const accumulator_type&) const
//   sink        items of type T are gathered into an output array
#pragma once

#include <korch/dataflow/error_bits.hpp>
#include <korch/dataflow/instance_state.hpp>
#include <korch/dataflow/signal.hpp>

#include <Kokkos_Core.hpp>

namespace korch::dataflow {

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
