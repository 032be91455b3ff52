// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Block: one block of a data source as a data item; it owns no memory.
#pragma once

#include <korch/data_item.hpp>
#include <korch/data_source.hpp>
#include <korch/grid.hpp>
#include <korch/tile.hpp>

#include <memory>
#include <string>
#include <vector>

namespace korch {

class Block : public DataItem {
 public:
  Block(const DataSource& source, int block);
  std::string describe() const override;
  Kind kind() const noexcept override { return Kind::block; }

  const DataSource& source() const noexcept { return *source_; }
  // The source as a korch::Grid; throws korch::Error naming the source when it is another kind.
  const Grid& grid() const { return as_grid(*source_); }
  int block_id() const noexcept { return block_; }
  const BlockMeta& meta() const { return source_->block(block_); }
  int level() const { return meta().level; }
  const Box& interior() const { return meta().interior; }
  // The block's storage (var, i, j, k) in its owner's layout, guard cells included.
  BlockView view() const { return source_->block_view(block_); }
  // The same on a korch::Grid, in the grid's LayoutRight type.
  Grid::BlockData data() const { return grid().block_data(block_); }
  // The block's face variables across `axis` (var, i, j, k) over face_box(meta().stored, axis)
  // (DataSource::face_view); throws korch::Error when the source keeps none there.
  BlockView face_view(int axis) const { return source_->face_view(block_, axis); }
  // Every tile of this block, in tile order (the splitter's block -> tiles step).
  std::vector<std::shared_ptr<Tile>> tiles() const;

 private:
  const DataSource* source_;
  int block_;
};

// Iterators over a source: every block, and every tile of every block (block-major).
std::vector<std::shared_ptr<Block>> all_blocks(const DataSource& source);
std::vector<std::shared_ptr<Tile>> all_tiles(const DataSource& source);

}  // namespace korch
