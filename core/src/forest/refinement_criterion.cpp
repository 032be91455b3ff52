// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/refinement_criterion.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace korch {

namespace {

// The variable's values around one cell: at(dp) for an offset dp of -1, 0 or +1 per axis.
struct Neighbourhood {
  const double* centre;
  std::array<std::ptrdiff_t, 3> stride;
  double at(int di, int dj, int dk) const { return centre[di * stride[0] + dj * stride[1] + dk * stride[2]]; }
  double along(int p, int sp, int q, int sq) const {
    std::array<int, 3> d{0, 0, 0};
    d[p] += sp;
    d[q] += sq;
    return at(d[0], d[1], d[2]);
  }
};

// One pair of axes (p, q) of the estimate: n^2 and d^2 added to num and den.
// Inlined: a call in the row's loop would keep it from vectorizing.
template <int P, int Q>
[[gnu::always_inline]] inline void add_axis_pair(const Neighbourhood& u, double c, double eps, double& num,
                                                 double& den) {
  double n = 0.0, d = 0.0;
  if constexpr (P == Q) {
    const double hi = u.along(P, 1, Q, 0), lo = u.along(P, -1, Q, 0);
    n = hi - 2.0 * c + lo;
    d = std::fabs(hi - c) + std::fabs(c - lo) + eps * (std::fabs(hi) + 2.0 * std::fabs(c) + std::fabs(lo));
  } else {
    const double pp = u.along(P, 1, Q, 1), pm = u.along(P, 1, Q, -1);
    const double mp = u.along(P, -1, Q, 1), mm = u.along(P, -1, Q, -1);
    n = 0.25 * (pp - pm - mp + mm);
    d = 0.25 * (std::fabs(pp - mp) + std::fabs(pm - mm)) +
        0.25 * eps * (std::fabs(pp) + std::fabs(pm) + std::fabs(mp) + std::fabs(mm));
  }
  num += n * n;
  den += d * d;
}

// The estimate's square before the root: the sum of n^2 over the sum of d^2, the axis pairs taken
// p slower than q. No branch and no loop, so that a row of cells vectorizes.
template <int Dims>
[[gnu::always_inline]] inline double squared_cell_estimate(const Neighbourhood& u, double eps) {
  double num = 0.0, den = 0.0;
  const double c = u.at(0, 0, 0);
  add_axis_pair<0, 0>(u, c, eps, num, den);
  if constexpr (Dims >= 2) {
    add_axis_pair<0, 1>(u, c, eps, num, den);
    if constexpr (Dims == 3) add_axis_pair<0, 2>(u, c, eps, num, den);
    add_axis_pair<1, 0>(u, c, eps, num, den);
    add_axis_pair<1, 1>(u, c, eps, num, den);
    if constexpr (Dims == 3) {
      add_axis_pair<1, 2>(u, c, eps, num, den);
      add_axis_pair<2, 0>(u, c, eps, num, den);
      add_axis_pair<2, 1>(u, c, eps, num, den);
      add_axis_pair<2, 2>(u, c, eps, num, den);
    }
  }
  // Where den is 0 so is num: 0 / 1 is the 0 the estimate takes there (den + 0 is den elsewhere;
  // arithmetic rather than a branch, which would keep the row from vectorizing).
  return num / (den + static_cast<double>(den == 0.0));
}

// The largest squared estimate over a block's interior cells. The root is taken once, of the
// largest: a correctly rounded square root never reverses an order, so the result is the largest
// of the cells' roots, bit for bit. The cells are visited with the smallest stride innermost (the
// largest of a set does not depend on the order).
template <int Dims>
double largest_squared_estimate(const double* first, const std::array<std::ptrdiff_t, 3>& stride,
                                const std::array<int, 3>& cells, double eps, double enough) {
  // Outermost first. Axes of one cell may share the smallest stride with a long one (k in a 2-D
  // block stored k fastest): the longer goes innermost, or rows would be one cell long.
  std::array<int, 3> axis{0, 1, 2};
  std::sort(axis.begin(), axis.end(),
            [&](int a, int b) { return stride[a] != stride[b] ? stride[a] > stride[b] : cells[a] < cells[b]; });
  double largest = 0.0;
  // A row's estimates first, in a loop whose iterations are independent (it vectorizes), then
  // their largest.
  constexpr int chunk = 64;
  double row_estimates[chunk];
  const std::ptrdiff_t step = stride[axis[2]];
  for (int o = 0; o < cells[axis[0]]; ++o)
    for (int m = 0; m < cells[axis[1]]; ++m) {
      const double* row = first + o * stride[axis[0]] + m * stride[axis[1]];
      for (int n0 = 0; n0 < cells[axis[2]]; n0 += chunk) {
        const int count = std::min(chunk, cells[axis[2]] - n0);
        for (int n = 0; n < count; ++n)
          row_estimates[n] = squared_cell_estimate<Dims>({row + (n0 + n) * step, stride}, eps);
        for (int n = 0; n < count; ++n) largest = row_estimates[n] > largest ? row_estimates[n] : largest;
      }
      if (std::sqrt(largest) > enough) return largest;  // the root the caller takes is above enough
    }
  return largest;
}

}  // namespace

double lohner_estimate(const BlockArray& array, int dims, const std::array<int, 3>& cells,
                       const std::array<int, 3>& guard, int var, const LohnerOptions& options, double enough) {
  if (dims < 1 || dims > 3) throw Error(fmt::format("lohner_estimate: dims = {}; give 1, 2 or 3", dims));
  for (int a = 0; a < dims; ++a)
    if (guard[a] < 1 || array.extent[a + 1] != cells[a] + 2 * guard[a])
      throw Error(
          fmt::format("lohner_estimate: axis {} has {} cells and {} guard cells, the array {} values; the "
                      "estimate reads one guard cell per side: give at least 1, filled, and an array of "
                      "cells + 2 * guard",
                      a, cells[a], guard[a], array.extent[a + 1]));
  if (var < 0 || var >= array.extent[0])
    throw Error(fmt::format("lohner_estimate: var = {} outside the array's {} variables", var, array.extent[0]));
  const std::array<std::ptrdiff_t, 3> stride{array.stride[1], array.stride[2], array.stride[3]};
  const double* first =
      array.data + var * array.stride[0] + guard[0] * stride[0] + guard[1] * stride[1] + guard[2] * stride[2];
  const double eps = options.filter;
  const double largest = dims == 1   ? largest_squared_estimate<1>(first, stride, cells, eps, enough)
                         : dims == 2 ? largest_squared_estimate<2>(first, stride, cells, eps, enough)
                                     : largest_squared_estimate<3>(first, stride, cells, eps, enough);
  return std::sqrt(largest);
}

}  // namespace korch
