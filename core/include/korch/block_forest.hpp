// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// BlockForest: the tree structure of an adaptive mesh of blocks (docs/adaptive-mesh.md). Over an
// array of root blocks (roots[0] x roots[1] x roots[2]), each block may be split into 2^dims
// children of the next level (a quadtree in 2-D, an octree in 3-D), every block with the same
// number of cells, so a child's cells are half as wide. A block is named by its level and its
// logical position among all blocks of that level (BlockKey). The leaves (blocks not split) cover
// the domain once and are what a cycle computes on.
//
// The forest keeps 2:1 balance across faces, edges and corners: two leaves that touch differ by at
// most one level, so a guard cell is filled from a block at most twice as fine or as coarse.
// refine() splits the flagged leaves and, first, any coarser leaf that would otherwise touch a
// leaf two levels finer; derefine() merges a family of siblings only when all of them are flagged
// leaves and the merged block stays balanced. The leaves are kept in the order of one Morton
// (Z-order) curve across levels: sort positions scaled to the finest level and interleave their
// bits, so that a block's descendants are contiguous and the curve cuts into compact pieces for
// ranks.
//
//   korch::BlockForest forest({2, {4, 4, 1}, {true, true, false}, 3});   // 2-D, 4x4 roots, periodic
//   forest.refine({forest.leaves()[5]});
//   for (const korch::BlockKey& leaf : forest.leaves())
//     for (const korch::Direction& d : korch::NeighbourList::directions(2))
//       for (const korch::ForestNeighbour& n : forest.neighbours(leaf, d)) ...
#pragma once

#include <korch/block_neighbours.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace korch {

// A block of the forest: its level (0 for the roots) and its logical position among the blocks of
// that level (0 .. roots[a] * 2^level - 1 along axis a; 0 along axes beyond dims).
struct BlockKey {
  int level = 0;
  std::array<std::int64_t, 3> position{};

  friend bool operator==(const BlockKey& a, const BlockKey& b) {
    return a.level == b.level && a.position == b.position;
  }
  friend bool operator!=(const BlockKey& a, const BlockKey& b) { return !(a == b); }
  // "level 2 (5, 3, 0)": how messages name a block.
  std::string describe() const;
};

struct BlockKeyHash {
  std::size_t operator()(const BlockKey& key) const noexcept;
};

// What touches a leaf in one direction.
struct ForestNeighbour {
  enum class Kind {
    same,      // a leaf of the same level
    coarser,   // a leaf one level coarser (one of its faces, edges or corners touches the leaf)
    finer,     // leaves one level finer: up to 2^(dims-1) across a face, fewer across edges and corners
    boundary,  // the domain's edge (a non-periodic axis)
  };
  Kind kind = Kind::boundary;
  BlockKey key;  // the neighbouring leaf (not for boundary)
};

struct ForestShape {
  int dims = 2;                       // 1, 2 or 3
  std::array<int, 3> roots{1, 1, 1};  // root blocks per axis (1 beyond dims)
  std::array<bool, 3> periodic{};     // wrap around along an axis
  int max_level = 0;                  // refine() leaves blocks of this level as they are
};

class BlockForest {
 public:
  // Every root block a leaf. Throws korch::Error for dims outside 1..3, a root count below 1 (or
  // above 1 beyond dims), a negative max_level, or a finest level too fine for the Morton keys
  // (roots[a] * 2^max_level beyond 2^(63 / dims)).
  explicit BlockForest(const ForestShape& shape);

  // The forest whose leaves are `leaves` (a code's own mesh): every listed block's ancestors
  // split, level by level. Throws korch::Error naming the first key outside the shape (a level
  // beyond max_level, a position beyond the level's blocks), listed twice or inside another listed
  // key, and the first block no key covers or that the 2:1 balance needs split.
  static BlockForest with_leaves(const ForestShape& shape, const std::vector<BlockKey>& leaves);

  const ForestShape& shape() const noexcept { return shape_; }
  // The leaves in Morton order.
  const std::vector<BlockKey>& leaves() const noexcept { return leaves_; }
  int n_leaves() const noexcept { return static_cast<int>(leaves_.size()); }
  // Leaves per level (index = level, up to the finest level present).
  std::vector<int> leaves_per_level() const;
  // Changes with every refine or derefine that changes the leaves: what was worked out from the
  // leaves (a guard fill's plan) holds while it stays.
  std::uint64_t generation() const noexcept { return generation_; }

  bool contains(const BlockKey& key) const;  // a leaf or a split block of the forest
  bool is_leaf(const BlockKey& key) const;
  // The leaf's index in leaves(); throws korch::Error naming the key when it is not a leaf.
  int leaf_index(const BlockKey& key) const;

  // Splits every flagged leaf below max_level (flagged leaves at max_level stay), and every leaf
  // the 2:1 balance needs split first. Returns the number of blocks split. Throws korch::Error
  // naming a flagged key that is not a leaf.
  int refine(const std::vector<BlockKey>& flagged);
  // Merges each family whose 2^dims siblings are all flagged leaves, when the merged block keeps
  // 2:1 balance with its neighbours (and, among families flagged together, with each other).
  // Returns the number of families merged. Throws korch::Error naming a flagged key that is not a
  // leaf, or a root (which has no parent).
  int derefine(const std::vector<BlockKey>& flagged);

  // What touches `leaf` in `direction` (each component -1, 0 or +1, not all 0, none beyond dims):
  // one same-level or coarser leaf, the finer leaves that touch it, or the boundary. Throws
  // korch::Error for a key that is not a leaf or a bad direction.
  std::vector<ForestNeighbour> neighbours(const BlockKey& leaf, const Direction& direction) const;

  // The parent (level - 1) and the 2^dims children (level + 1, x fastest) of a key.
  BlockKey parent(const BlockKey& key) const;
  std::vector<BlockKey> children(const BlockKey& key) const;
  // The key's position on the Morton curve over the finest level's positions.
  std::uint64_t morton(const BlockKey& key) const;

  // Checks every invariant (the leaves cover the domain once, 2:1 balance across faces, edges and
  // corners, Morton order, every split block's children present); throws korch::Error naming the
  // first broken one. For tests and after a code's own changes.
  void check() const;

 private:
  std::int64_t extent(int level, int axis) const;
  bool wrap(BlockKey& key) const;                           // false when the key lies beyond a non-periodic edge
  bool touches_grandchildren(const BlockKey& block) const;  // a leaf two levels finer touches it
  void check_direction(const Direction& direction) const;
  void split(const BlockKey& key);
  void order_leaves();

  ForestShape shape_;
  int morton_bits_ = 0;  // bits per axis of the finest level's positions
  // Every block of the forest, true for leaves.
  std::unordered_map<BlockKey, bool, BlockKeyHash> blocks_;
  std::vector<BlockKey> leaves_;
  std::unordered_map<BlockKey, int, BlockKeyHash> leaf_index_;
  std::uint64_t generation_ = 0;
};

}  // namespace korch
