// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The enumerate node: heads a region, turning each parent item into its elements.
#pragma once

#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/node.hpp>

namespace korch::dataflow {

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

  template <class Kernel, class Member>
  KOKKOS_INLINE_FUNCTION void fire(const Kernel& kernel, const Member& t, const InstanceState& in, int id) const {
    kernel.fire_enumerate(*this, t, in, id);
  }
};

}  // namespace korch::dataflow
