// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The sink node: gathers a pipeline's results into an output array.
#pragma once

#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/node.hpp>
#include <korch/dataflow/queue.hpp>

#include <Kokkos_Core.hpp>

namespace korch::dataflow {

// Gathers items into an output array with one atomic per run: order is kept within an instance.
// A sink is a terminal of every region it lies in: it releases parents like an aggregate.
template <class T>
struct SinkNode : Node<SinkNode<T>> {
  static constexpr NodeKind kind = NodeKind::Sink;
  using input_type = T;
  static constexpr int n_channels = 0;

  template <class Kernel, class Member>
  KOKKOS_INLINE_FUNCTION void fire(const Kernel& kernel, const Member& t, const InstanceState& in, int id) const {
    kernel.fire_consumer(*this, t, in, id);
  }
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void plan_run(const Kernel& kernel, const InstanceState& in, int id, int n) const {
    kernel.sink_claim(in, id, n);
  }
  template <class Kernel, class Member>
  KOKKOS_INLINE_FUNCTION void lanes(const Kernel& kernel, const Member& t, const InstanceState& in, int id,
                                    int n) const {
    const DataQueue<T> q = kernel.template queue<T>(in, id);
    const long long base = in.wide[0];
    const auto& nd = kernel.desc(id);
    T* out = kernel.template sink_data<T>(nd.sink);
    int* origin = kernel.sink_origin(nd.sink);
    const long long cap = kernel.sink_capacity(nd.sink);
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
        kernel.flag(E_SINK_OVERFLOW, id);
      }
    });
  }
  struct nothing {
    KOKKOS_INLINE_FUNCTION void operator()(int, int) const {}
  };
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void on_boundary(const Kernel& kernel, const InstanceState& in, int id,
                                          const Signal& s) const {
    kernel.terminal_boundary(in, id, s, nothing{}, nothing{});
  }
  // A user signal ends at the sink: counted and logged (Pipeline::signals).
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void on_user(const Kernel& kernel, const InstanceState& in, int id, const Signal& s) const {
    kernel.log_signal(in, id, s);
  }
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void on_flush_done(const Kernel& kernel, const InstanceState& in, int id, int status) const {
    kernel.terminal_flush(in, id, status, nothing{});
  }
};

}  // namespace korch::dataflow
