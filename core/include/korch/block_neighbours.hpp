// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// NeighbourList: how a physics code's own blocks touch each other, so that korch's guard-cell
// exchange can fill them (docs/ranks.md, "A code's own blocks"). For every block of a data source
// (a BlockList, or any DataSource) and every direction across a face, an edge or a corner, the code
// names what lies there: a block (its global id and the rank that owns it), the domain's outflow
// boundary, a boundary the code fills itself (a reflecting wall, an inflow), or nothing to fill. A
// periodic domain names the wrapped neighbour.
//
//   korch::NeighbourList near(2);                                  // 2-D: 8 directions per block
//   near.set(b, {-1, 0, 0}, korch::Neighbour::block(left_id, left_rank));
//   near.set(b, {0, +1, 0}, korch::Neighbour::outflow());
//   korch::GuardCellExchange exchange(blocks, near, comm);
//
// The blocks are those of one level: the neighbour of a face has the same cell size. Blocks may
// differ in size only where that does not change the face they share: across a face in x the
// neighbours have the same number of cells in y and z, across an edge along z the same in z; a
// corner's neighbour needs only as many interior cells as guard cells are filled. The exchange
// checks this, and that the lists agree across ranks (if A names B in one direction, B names A in
// the opposite one), and throws korch::Error naming the block, the direction and the sizes.
#pragma once

#include <korch/guard_cell_boundary.hpp>

#include <array>
#include <functional>
#include <string>
#include <vector>

namespace korch {

class DataSource;

// A direction from a block to a neighbour: each component -1, 0 or +1, not all 0 (x, y, z).
using Direction = std::array<int, 3>;

struct Neighbour {
  enum class Kind {
    unset,    // not described: an error if a guard cell needs it
    block,    // the block `global_id` on `rank`
    outflow,  // the domain's edge: guard cells copy the nearest interior cell (zero gradient)
    none,     // leave these guard cells as they are (the code fills them, or no stencil reads them)
    user,     // the exchange's boundary fill (GuardCellExchange::set_boundary_fill) fills them
  };
  Kind kind = Kind::unset;
  int global_id = -1;
  int rank = 0;

  static Neighbour block(int global_id, int rank = 0) { return {Kind::block, global_id, rank}; }
  static Neighbour outflow() { return {Kind::outflow, -1, 0}; }
  static Neighbour none() { return {Kind::none, -1, 0}; }
  static Neighbour user() { return {Kind::user, -1, 0}; }
};

class NeighbourList {
 public:
  // dims: the directions with guard cells (1: x; 2: x, y; 3: x, y, z). Throws korch::Error otherwise.
  explicit NeighbourList(int dims);

  int dims() const noexcept { return dims_; }
  // Blocks described: 0 .. n_blocks() - 1 (DataSource ids of this rank's blocks).
  int n_blocks() const noexcept { return static_cast<int>(entries_.size()); }

  // What lies next to `block` (its id in the data source) in `direction`. Throws korch::Error for a
  // negative block, a component outside -1..1, the zero direction, a direction outside dims(), or a
  // block neighbour with a negative id or rank.
  void set(int block, Direction direction, Neighbour neighbour);
  // Unset for a block or direction never set.
  Neighbour get(int block, Direction direction) const;

  // The 3^dims - 1 directions, x fastest.
  static std::vector<Direction> directions(int dims);
  // "(-1, 0, +1)": how errors name a direction.
  static std::string name(Direction direction);

  // The neighbours of blocks laid out as one uniform array of blocks[0] x blocks[1] x blocks[2]
  // blocks whose global ids are x fastest (index[0] + blocks[0] * (index[1] + blocks[1] * index[2]),
  // as korch::Grid numbers them): each block of `source` is placed by BlockMeta::index, and rank_of
  // gives the owner of a global id. Periodic directions name the wrapped block, outflow ones
  // Neighbour::outflow().
  static NeighbourList uniform(const DataSource& source, int dims, std::array<int, 3> blocks,
                               std::array<BoundaryKind, 3> boundary, const std::function<int(int)>& rank_of);

 private:
  static int slot(Direction direction) noexcept {
    return (direction[0] + 1) + 3 * (direction[1] + 1) + 9 * (direction[2] + 1);
  }
  void check(Direction direction) const;

  int dims_;
  std::vector<std::array<Neighbour, 27>> entries_;
};

}  // namespace korch
