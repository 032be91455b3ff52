// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Löhner's error estimator (docs/adaptive-mesh.md, "Regrids"): a normalised second derivative of a
// variable, in [0, 1], large where the solution bends sharply compared with its slopes and values.
// Per cell, with u+p and u-p the neighbours along axis p and the sums over every pair of axes:
//   E^2 = sum_pq N_pq^2 / sum_pq D_pq^2
//   N_pp = u+p - 2u + u-p             D_pp = |u+p - u| + |u - u-p| + eps (|u+p| + 2|u| + |u-p|)
//   N_pq = (u+p+q - u+p-q - u-p+q + u-p-q) / 4
//   D_pq = (|u+p+q - u-p+q| + |u+p-q - u-p-q|) / 4 + eps (|u+p+q| + |u+p-q| + |u-p+q| + |u-p-q|) / 4
// eps (the filter, 0.01 by default) keeps small ripples on a large value from counting. The
// estimate reads one guard cell per side (edges and corners for the cross terms): fill them first.
#pragma once

#include <korch/block_list.hpp>

#include <array>
#include <limits>

namespace korch {

struct LohnerOptions {
  double filter = 0.01;  // eps above
};

// The largest estimate over the interior cells of a block stored in `array` (cells + 2 * guard per
// axis, guard >= 1 along the first `dims` axes) for variable `var`. With `enough`, it may stop as
// soon as a cell's estimate exceeds it and return that cell's (above `enough`, not necessarily the
// largest): what a decision against a threshold needs. Throws korch::Error naming the field when
// dims, the guard cells or var do not fit the array.
double lohner_estimate(const BlockArray& array, int dims, const std::array<int, 3>& cells,
                       const std::array<int, 3>& guard, int var, const LohnerOptions& options = {},
                       double enough = std::numeric_limits<double>::infinity());

}  // namespace korch
