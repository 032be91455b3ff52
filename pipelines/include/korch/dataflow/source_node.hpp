// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Sources of dataflow pipelines: where the input items come from (a View or a generator
// function), and the source node that feeds them into the pipeline.
#pragma once

#include <korch/dataflow/compiler.hpp>
#include <korch/dataflow/node.hpp>

#include <Kokkos_Core.hpp>

namespace korch::dataflow {

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

// A source type may raise user signals after its items: `static constexpr int raises = R` and
// template <class Raise> void raise_after(long i, Raise&) const, called once per item i (node.hpp).
template <class Src>
struct SourceNode : Node<SourceNode<Src>> {
  static constexpr NodeKind kind = NodeKind::Source;
  using output_type = typename Src::value_type;
  static constexpr int n_channels = 1;
  static constexpr int raises = detail::raises_per_input<Src>::value;
  Src src;

  // Boss lane, after item `index` of the input went downstream.
  template <class Kernel>
  KOKKOS_INLINE_FUNCTION void raise_after(const Kernel& kernel, const InstanceState& in, int id, int index) const {
    Raiser<Kernel> r(kernel, in, id, raises);
    src.raise_after(static_cast<long>(index), r);
  }

  template <class Kernel, class Member>
  KOKKOS_INLINE_FUNCTION void fire(const Kernel& kernel, const Member& t, const InstanceState& in, int id) const {
    kernel.fire_source(*this, t, in, id);
  }
};

}  // namespace korch::dataflow
