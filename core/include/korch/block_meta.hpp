// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Box and BlockMeta: what the runtime knows about a block besides its data, whichever data source
// (korch::Grid, a physics code's BlockList) holds it.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

namespace korch {

// A half-open box [lo, hi) of block-local cell indices.
struct Box {
  std::array<int, 3> lo{0, 0, 0};
  std::array<int, 3> hi{0, 0, 0};
  std::size_t cells() const noexcept {
    return static_cast<std::size_t>(hi[0] - lo[0]) * static_cast<std::size_t>(hi[1] - lo[1]) *
           static_cast<std::size_t>(hi[2] - lo[2]);
  }
  int extent(int d) const noexcept { return hi[d] - lo[d]; }
  bool operator==(const Box& o) const noexcept { return lo == o.lo && hi == o.hi; }
};

// Everything the runtime knows about a block besides its data.
struct BlockMeta {
  int id = 0;         // index among the blocks this source holds
  int global_id = 0;  // index in the whole grid, x fastest (equal to id when the source holds all)
  int level = 0;
  std::array<int, 3> index{0, 0, 0};        // block coordinates in the grid (at its level)
  std::array<double, 3> delta{0, 0, 0};     // cell size
  std::array<double, 3> lo_coord{0, 0, 0};  // physical coordinate of the interior's low corner
  Box interior;                             // block-local
  Box stored;                               // interior plus guard cells
};

// The faces of a box of cells across `axis`: face i is the low face of cell i, so the box's cells
// are bounded by faces lo .. hi of that axis, both included (docs/data-sources.md, "Face variables").
Box face_box(const Box& cells, int axis) noexcept;
// Whether a block has faces across `axis`: it extends along the axis (stores more than one cell
// there). A 2-D block (one cell in z, no guard cells there) has faces across x and y only.
bool has_faces_across(const BlockMeta& meta, int axis) noexcept;

// Tiles of size `tile_cells` (0: whole extent) covering `interior`, x fastest; the last tile in a
// direction is cut short at the interior's edge.
std::vector<Box> tile_interior(const Box& interior, const std::array<int, 3>& tile_cells);

}  // namespace korch
