// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro's number of directions as a compile-time constant for the device kernels: with it the
// loops over directions unroll and the arrays they index stay in a GPU thread's registers, where a
// run-time count leaves them in local memory (docs/benchmarks.md, "The device kernels").
#pragma once

#include <korch/error.hpp>

#include <type_traits>

namespace korch::hydro {

// Calls f(std::integral_constant<int, dim>{}) for dim 1, 2 or 3. f is a plain (host) callable that
// calls a function template taking the constant: nvcc does not take device lambdas defined inside
// a generic lambda.
template <class F>
decltype(auto) with_static_dim(int dim, F&& f) {
  switch (dim) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    case 3: return f(std::integral_constant<int, 3>{});
    default: throw Error::format("hydro: {} directions asked for; the solver takes 1, 2 or 3", dim);
  }
}

}  // namespace korch::hydro
