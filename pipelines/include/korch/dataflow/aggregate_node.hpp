// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The aggregate node: a terminal of an enumeration region that folds the elements of each parent
// into one output.
#pragma once

#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/node.hpp>
#include <korch/dataflow/queue.hpp>

#include <Kokkos_Core.hpp>

namespace korch::dataflow {

// A terminal node of an enumeration region: accumulates the elements of the current parent and
// emits finish(parent, acc) when the parent closes (next Boundary of its region, a Boundary of an
// enclosing region, or the completion of a flush of its region or an enclosing one). With
// A::raises > 0, A::raise_after(parent, acc, raise) may raise user signals after that output.
template <class A>
struct AggregateNode : Node<AggregateNode<A>> {
  static constexpr NodeKind kind = NodeKind::Aggregate;
  using input_type = typename A::input_type;
  using parent_type = typename A::parent_type;
  using accumulator_type = typename A::accumulator_type;
  using output_type = typename A::output_type;
  static constexpr int n_channels = 1;
  static constexpr int raises = detail::raises_per_input<A>::value;
  A fn;

  template <class Kernel, class Member>
  KOKKOS_INLINE_FUNCTION void fire(const Kernel& kernel, const Member& t, const InstanceState& in, int id) const {
    kernel.fire_consumer(*this, t, in, id);
  }

  // Accumulation is sequential on the boss lane, in queue order (the items of one run all belong
  // to one parent, since runs never cross a signal).
  template <class Kernel, class Member>
  KOKKOS_INLINE_FUNCTION void lanes(const Kernel& kernel, const Member& t, const InstanceState& in, int id,
                                    int n) const {
    Kokkos::single(Kokkos::PerTeam(t), [&]() {
      const auto& nd = kernel.desc(id);
      if (kernel.open_slot(in, id, nd.closes) < 0) {
        kernel.flag(E_NO_PARENT, id);
        return;
      }
      const DataQueue<input_type> q = kernel.template queue<input_type>(in, id);
      accumulator_type& acc = *reinterpret_cast<accumulator_type*>(in.arena + nd.arena_off);
      for (int l = 0; l < n; ++l) fn.add(acc, q.at(l));
    });
  }

  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void on_boundary(const Kernel& kernel, const InstanceState& in, int id,
                                          const Signal& s) const {
    kernel.terminal_boundary(in, id, s, closer<Kernel>{this, &kernel, &in, id}, opener<Kernel>{this, &kernel, &in, id});
  }
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void on_flush_done(const Kernel& kernel, const InstanceState& in, int id, int status) const {
    kernel.terminal_flush(in, id, status, closer<Kernel>{this, &kernel, &in, id});
  }

  template <class Kernel>
  struct closer {
    const AggregateNode* self;
    const Kernel* kernel;
    const InstanceState* in;
    int id;
    KOKKOS_INLINE_FUNCTION void operator()(int region, int slot) const {
      const auto& nd = kernel->desc(id);
      const parent_type& p = kernel->template parent_at<parent_type>(*in, region, slot);
      const accumulator_type& acc = *reinterpret_cast<const accumulator_type*>(in->arena + nd.arena_off);
      kernel->push_item(*in, nd.child[0], self->fn.finish(p, acc));
      if constexpr (raises > 0) {
        Raiser<Kernel> r(*kernel, *in, id, raises);
        self->fn.raise_after(p, acc, r);
      }
    }
  };
  template <class Kernel>
  struct opener {
    const AggregateNode* self;
    const Kernel* kernel;
    const InstanceState* in;
    int id;
    KOKKOS_INLINE_FUNCTION void operator()(int region, int slot) const {
      const auto& nd = kernel->desc(id);
      accumulator_type& acc = *reinterpret_cast<accumulator_type*>(in->arena + nd.arena_off);
      acc = self->fn.init(kernel->template parent_at<parent_type>(*in, region, slot));
    }
  };
};

}  // namespace korch::dataflow
