// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The compute kernel every task of korch-bench-task_bench runs: `iterations` rounds of a fixed
// number of floating-point operations on a few registers, and no memory traffic.
//
// Eight independent chains x <- x * m + c (one multiply and one add each: 16 flops per iteration;
// korch builds without floating-point contraction, so the two stay two operations). The chains
// start from a seed the caller derives from the task's inputs, and the result is the bitwise XOR
// of the eight final values, which the caller stores in the task's output: the compiler can
// neither drop the loop nor evaluate it ahead of time, and the XOR adds no flops, so a task does
// exactly iterations x flops_per_iteration floating-point operations. With m = 1 - 1e-7 and
// c = 1e-7 every chain converges to 1 from its start near 1 and never overflows or goes subnormal.
#pragma once

#include <cstdint>
#include <cstring>

namespace korch::bench {

inline constexpr long flops_per_iteration = 16;

inline std::uint64_t bits_of(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// `seed` in [0, 1).
inline std::uint64_t compute_kernel(long iterations, double seed) {
  const double m = 1.0 - 1e-7, c = 1e-7;
  double x0 = 1.0 + seed, x1 = 1.0 - seed, x2 = 0.5 + seed, x3 = 1.5 - seed;
  double x4 = 1.25 + seed, x5 = 0.75 + seed, x6 = 1.125 - seed, x7 = 0.875 + seed;
  for (long k = 0; k < iterations; ++k) {
    x0 = x0 * m + c;
    x1 = x1 * m + c;
    x2 = x2 * m + c;
    x3 = x3 * m + c;
    x4 = x4 * m + c;
    x5 = x5 * m + c;
    x6 = x6 * m + c;
    x7 = x7 * m + c;
  }
  return bits_of(x0) ^ bits_of(x1) ^ bits_of(x2) ^ bits_of(x3) ^ bits_of(x4) ^ bits_of(x5) ^ bits_of(x6) ^ bits_of(x7);
}

}  // namespace korch::bench
