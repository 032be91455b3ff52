// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The enumerate node: heads a region, turning each parent item into its elements.
#pragma once

#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/node.hpp>

namespace korch::dataflow {

// The enumerate node: a run takes the next parent (by value, into a parent buffer slot whose
// reference count is the number of terminal nodes of its region) and issues the Boundary signal,
// or continues the current parent; it emits up to one vector width of elements per run. With
// E::raises > 0, E::raise_after(parent, i, raise) may raise user signals after element i.
template <class E>
struct EnumerateNode : Node<EnumerateNode<E>> {
  static constexpr NodeKind kind = NodeKind::Enumerate;
  using input_type = typename E::parent_type;
  using parent_type = typename E::parent_type;
  using element_type = typename E::element_type;
  static constexpr int n_channels = 1;
  static constexpr int raises = detail::raises_per_input<E>::value;
  E fn;

  // Boss lane, after element `index` of the current parent went downstream.
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void raise_after(const Kernel& kernel, const InstanceState& in, int id, int index) const {
    const parent_type& p = reinterpret_cast<const parent_type*>(
        in.arena + kernel.desc(id).arena_off)[kernel.node_field(in, id, detail::N_SLOT)];
    Raiser<Kernel> r(kernel, in, id, raises);
    fn.raise_after(p, index, r);
  }

  template <class Kernel, class Member>
  KOKKOS_INLINE_FUNCTION void fire(const Kernel& kernel, const Member& t, const InstanceState& in, int id) const {
    kernel.fire_enumerate(*this, t, in, id);
  }
};

}  // namespace korch::dataflow
