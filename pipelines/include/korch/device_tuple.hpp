// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A tuple usable inside device kernels (CUDA and HIP cannot call std::get there): dataflow
// pipelines keep their node objects in one, mesh loops their per-argument accessors.
//
//   korch::detail::DeviceTuple<int, double> t(1, 2.0);
//   korch::detail::get<1>(t) = 3.0;        // inside a KOKKOS_LAMBDA or a functor
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <utility>

namespace korch::detail {

// Element I of a tuple; a tuple derives from one leaf per element, so get<I> finds it by the
// derived-to-base conversion alone.
template <std::size_t I, class T>
struct TupleLeaf {
  T value;
};

template <class Seq, class... T>
struct DeviceTupleImpl;

template <std::size_t... I, class... T>
struct DeviceTupleImpl<std::index_sequence<I...>, T...> : TupleLeaf<I, T>... {
  DeviceTupleImpl() = default;  // leaves default-initialized, like a plain struct
  explicit DeviceTupleImpl(const T&... v) : TupleLeaf<I, T>{v}... {}
};

// A class, not an alias of DeviceTupleImpl: nvcc cannot deduce T... through the index sequence.
template <class... T>
struct DeviceTuple : DeviceTupleImpl<std::index_sequence_for<T...>, T...> {
  using Impl = DeviceTupleImpl<std::index_sequence_for<T...>, T...>;
  DeviceTuple() = default;
  explicit DeviceTuple(const T&... v) : Impl(v...) {}
};

template <std::size_t I, class T>
KOKKOS_INLINE_FUNCTION T& get(TupleLeaf<I, T>& leaf) {
  return leaf.value;
}
template <std::size_t I, class T>
KOKKOS_INLINE_FUNCTION const T& get(const TupleLeaf<I, T>& leaf) {
  return leaf.value;
}

}  // namespace korch::detail
