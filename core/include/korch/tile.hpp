// Tile: a sub-box of one block's interior, the unit of work of host pipelines.
// It refers to the grid's host data; it owns no memory.
#pragma once

#include <korch/data_item.hpp>
#include <korch/grid.hpp>

#include <string>

namespace korch {

class Tile : public DataItem {
 public:
  Tile(const Grid& grid, int block, int tile);
  std::string describe() const override;

  const Grid& grid() const noexcept { return *grid_; }
  int block_id() const noexcept { return block_; }
  int tile_index() const noexcept { return tile_; }
  const BlockMeta& block_meta() const { return grid_->block(block_); }
  int level() const { return block_meta().level; }
  // Block-local cell indices of the tile's interior cells.
  const Box& box() const noexcept { return box_; }
  // The whole block's storage (var, i, j, k); index it with box() indices.
  Grid::BlockData data() const { return grid_->block_data(block_); }

 private:
  const Grid* grid_;
  int block_;
  int tile_;
  Box box_;
};

}  // namespace korch
