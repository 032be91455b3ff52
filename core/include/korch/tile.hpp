// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tile: a sub-box of one block's interior, the unit of work of host pipelines.
// It refers to its data source's host data; it owns no memory.
#pragma once

#include <korch/data_item.hpp>
#include <korch/data_source.hpp>
#include <korch/grid.hpp>

#include <string>

namespace korch {

class Tile : public DataItem {
 public:
  Tile(const DataSource& source, int block, int tile);
  std::string describe() const override;
  Kind kind() const noexcept override { return Kind::tile; }

  const DataSource& source() const noexcept { return *source_; }
  // The source as a korch::Grid; throws korch::Error naming the source when it is another kind.
  const Grid& grid() const { return as_grid(*source_); }
  int block_id() const noexcept { return block_; }
  int tile_index() const noexcept { return tile_; }
  const BlockMeta& block_meta() const { return source_->block(block_); }
  int level() const { return block_meta().level; }
  // Block-local cell indices of the tile's interior cells.
  const Box& box() const noexcept { return box_; }
  // The whole block's storage (var, i, j, k) in its owner's layout; index it with box() indices.
  BlockView view() const { return source_->block_view(block_); }
  // The same on a korch::Grid, in the grid's LayoutRight type.
  Grid::BlockData data() const { return grid().block_data(block_); }
  // The whole block's face variables across `axis` (DataSource::face_view), and the faces that
  // bound this tile's cells there: face_box(box(), axis), both ends included, so neighbouring
  // tiles share the face between them. Of those, the tile owns (writes without racing the next
  // tile's thread) its high face only at the block interior's high edge: owned_faces(axis).
  BlockView face_view(int axis) const { return source_->face_view(block_, axis); }
  Box faces(int axis) const noexcept { return face_box(box_, axis); }
  Box owned_faces(int axis) const {
    Box owned = faces(axis);
    if (box_.hi[axis] < block_meta().interior.hi[axis]) owned.hi[axis] -= 1;
    return owned;
  }

 private:
  const DataSource* source_;
  int block_;
  int tile_;
  Box box_;
};

}  // namespace korch
