// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/block_meta.hpp>

#include <algorithm>

namespace korch {

std::vector<Box> tile_interior(const Box& interior, const std::array<int, 3>& tile_cells) {
  std::array<int, 3> t{};
  for (int d = 0; d < 3; ++d) {
    const int n = interior.extent(d);
    t[d] = tile_cells[d] <= 0 ? n : std::min(tile_cells[d], n);
  }
  std::vector<Box> tiles;
  for (int k = interior.lo[2]; k < interior.hi[2]; k += t[2])
    for (int j = interior.lo[1]; j < interior.hi[1]; j += t[1])
      for (int i = interior.lo[0]; i < interior.hi[0]; i += t[0]) {
        Box b;
        const int start[3] = {i, j, k};
        for (int d = 0; d < 3; ++d) {
          b.lo[d] = start[d];
          b.hi[d] = std::min(start[d] + t[d], interior.hi[d]);
        }
        tiles.push_back(b);
      }
  return tiles;
}

Box face_box(const Box& cells, int axis) noexcept {
  Box faces = cells;
  faces.hi[axis] += 1;
  return faces;
}

bool has_faces_across(const BlockMeta& meta, int axis) noexcept {
  return axis >= 0 && axis < 3 && meta.stored.extent(axis) > 1;
}

}  // namespace korch
