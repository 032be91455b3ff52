// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the dataflow suites: small int graphs (enumerate, aggregate, pass, split, convert),
// their input, the compiled graph's region numbers and labels, and pipeline options.
#pragma once

#include <korch/dataflow.hpp>

#include <Kokkos_Core.hpp>

#include <random>
#include <string>

namespace test_dataflow_graphs {

namespace df = korch::dataflow;

// ---- int graphs for region numbering -------------------------------------------------------
struct Range {  // parent p -> p % 4 elements p*10 + i
  using parent_type = int;
  using element_type = int;
  KOKKOS_INLINE_FUNCTION int count(const int& p) const { return (p < 0 ? -p : p) % 4; }
  KOKKOS_INLINE_FUNCTION int element(const int& p, int i) const { return p * 10 + i; }
};
struct Sum {  // per parent: parent + sum of elements
  using input_type = int;
  using parent_type = int;
  using accumulator_type = int;
  using output_type = int;
  KOKKOS_INLINE_FUNCTION int init(const int& p) const { return p; }
  KOKKOS_INLINE_FUNCTION void add(int& acc, const int& x) const { acc += x; }
  KOKKOS_INLINE_FUNCTION int finish(const int&, const int& acc) const { return acc; }
};
struct Pass {
  using input_type = int;
  using outputs = df::Outputs<df::Out<int, 1>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const int& x, Emit& emit) const {
    emit(x);
  }
};
struct Split {
  using input_type = int;
  using outputs = df::Outputs<df::Out<int, 1>, df::Out<int, 1>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const int& x, Emit& emit) const {
    if (x % 2)
      emit(x);
    else
      emit(df::channel<1>, x);
  }
};
struct ToDouble {
  using input_type = int;
  using outputs = df::Outputs<df::Out<double, 1>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const int& x, Emit& emit) const {
    emit(static_cast<double>(x));
  }
};

inline Kokkos::View<int*> ints(int n, unsigned seed) {
  std::mt19937 rng(seed);
  Kokkos::View<int*> d("ints", n);
  auto h = Kokkos::create_mirror_view(d);
  for (int i = 0; i < n; ++i) h(i) = static_cast<int>(rng() % 1000);
  Kokkos::deep_copy(d, h);
  return d;
}

inline int number(const df::CompiledGraph& g, const std::string& head) {
  for (const auto& r : g.regions)
    if (r.name == head) return r.number;
  return -1;
}
inline int label(const df::CompiledGraph& g, const std::string& node) { return g.label[g.index_of(node)]; }

inline df::Options opts(int width, double scale, int instances) {
  df::Options o;
  o.vector_width = width;
  o.queue_scale = scale;
  o.instances = instances;
  return o;
}

}  // namespace test_dataflow_graphs
