// Block: one block of the grid as a data item; it owns no memory.
#pragma once

#include <korch/data_item.hpp>
#include <korch/grid.hpp>
#include <korch/tile.hpp>

#include <memory>
#include <string>
#include <vector>

namespace korch {

class Block : public DataItem {
 public:
  Block(const Grid& grid, int block);
  std::string describe() const override;

  const Grid& grid() const noexcept { return *grid_; }
  int block_id() const noexcept { return block_; }
  const BlockMeta& meta() const { return grid_->block(block_); }
  int level() const { return meta().level; }
  const Box& interior() const { return meta().interior; }
  Grid::BlockData data() const { return grid_->block_data(block_); }
  // Every tile of this block, in tile order (the splitter's block -> tiles step).
  std::vector<std::shared_ptr<Tile>> tiles() const;

 private:
  const Grid* grid_;
  int block_;
};

// Iterators over a grid: every block, and every tile of every block (block-major).
std::vector<std::shared_ptr<Block>> all_blocks(const Grid& grid);
std::vector<std::shared_ptr<Tile>> all_tiles(const Grid& grid);

}  // namespace korch
