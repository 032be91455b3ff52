// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the ForestMesh suites share: a bump to refine around and a flux-form advection step that
// records its faces' fluxes.
#pragma once

#include <korch/block_meta.hpp>
#include <korch/forest_mesh.hpp>

#include <array>
#include <cmath>

namespace korch::test {

using korch::ForestMesh;

inline double bump(const std::array<double, 3>& x, double cx, double cy, double width = 0.004) {
  const double r2 = (x[0] - cx) * (x[0] - cx) + (x[1] - cy) * (x[1] - cy);
  return 1.0 + 4.0 * std::exp(-r2 / width);
}

// First-order upwind advection with velocity (ax, ay) > 0 in flux form: variable 0 into variable
// 1 on the interior of one leaf, the fluxes through the block's faces into the mesh's face arrays.
template <class View>
void advect(const View& u, const View& next, const korch::BlockMeta& meta, ForestMesh& mesh, double dt) {
  const double ax = 1.0, ay = 0.5;
  const auto& s = mesh.shape();
  const int gi = s.guard[0], gj = s.guard[1], ni = s.cells[0], nj = s.cells[1];
  double* x_low = mesh.face_flux(meta.id, 0, 0);
  double* x_high = mesh.face_flux(meta.id, 0, 1);
  double* y_low = mesh.face_flux(meta.id, 1, 0);
  double* y_high = mesh.face_flux(meta.id, 1, 1);
  for (int j = gj; j < gj + nj; ++j)
    for (int i = gi; i < gi + ni; ++i) {
      const double fx_lo = ax * u(i - 1, j, 0), fx_hi = ax * u(i, j, 0);
      const double fy_lo = ay * u(i, j - 1, 0), fy_hi = ay * u(i, j, 0);
      next(i, j, 0) = u(i, j, 0) - dt / meta.delta[0] * (fx_hi - fx_lo) - dt / meta.delta[1] * (fy_hi - fy_lo);
      if (i == gi) x_low[j - gj] = fx_lo;
      if (i == gi + ni - 1) x_high[j - gj] = fx_hi;
      if (j == gj) y_low[i - gi] = fy_lo;
      if (j == gj + nj - 1) y_high[i - gi] = fy_hi;
    }
}

// Variable 1 into variable 0 on the interior of this rank's leaves (2-D): the step's result
// becomes the next step's start.
inline void take_next(ForestMesh& mesh) {
  const auto& s = mesh.shape();
  for (int b = 0; b < static_cast<int>(mesh.own_leaves().size()); ++b) {
    const korch::BlockArray& a = mesh.array(b);
    for (int j = s.guard[1]; j < s.guard[1] + s.cells[1]; ++j)
      for (int i = s.guard[0]; i < s.guard[0] + s.cells[0]; ++i)
        a.data[i * a.stride[1] + j * a.stride[2]] = a.data[a.stride[0] + i * a.stride[1] + j * a.stride[2]];
  }
}

}  // namespace korch::test
