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

double cell_estimate(const Neighbourhood& u, int dims, double eps) {
  double num = 0.0, den = 0.0;
  const double c = u.at(0, 0, 0);
  for (int p = 0; p < dims; ++p)
    for (int q = 0; q < dims; ++q) {
      double n = 0.0, d = 0.0;
      if (p == q) {
        const double hi = u.along(p, 1, q, 0), lo = u.along(p, -1, q, 0);
        n = hi - 2.0 * c + lo;
        d = std::fabs(hi - c) + std::fabs(c - lo) + eps * (std::fabs(hi) + 2.0 * std::fabs(c) + std::fabs(lo));
      } else {
        const double pp = u.along(p, 1, q, 1), pm = u.along(p, 1, q, -1);
        const double mp = u.along(p, -1, q, 1), mm = u.along(p, -1, q, -1);
        n = 0.25 * (pp - pm - mp + mm);
        d = 0.25 * (std::fabs(pp - mp) + std::fabs(pm - mm)) +
            0.25 * eps * (std::fabs(pp) + std::fabs(pm) + std::fabs(mp) + std::fabs(mm));
      }
      num += n * n;
      den += d * d;
    }
  return den > 0.0 ? std::sqrt(num / den) : 0.0;
}

}  // namespace

double lohner_estimate(const BlockArray& array, int dims, const std::array<int, 3>& cells,
                       const std::array<int, 3>& guard, int var, const LohnerOptions& options) {
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
  double largest = 0.0;
  const std::array<std::ptrdiff_t, 3> stride{array.stride[1], array.stride[2], array.stride[3]};
  for (int k = 0; k < cells[2]; ++k)
    for (int j = 0; j < cells[1]; ++j)
      for (int i = 0; i < cells[0]; ++i) {
        const double* centre = array.data + var * array.stride[0] + (i + guard[0]) * stride[0] +
                               (j + guard[1]) * stride[1] + (k + guard[2]) * stride[2];
        largest = std::max(largest, cell_estimate({centre, stride}, dims, options.filter));
      }
  return largest;
}

}  // namespace korch
