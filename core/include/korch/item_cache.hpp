// ItemCache: the tile and block items of one grid, kept by the Runtime from one execution cycle to
// the next. Tiles and blocks are immutable views of the grid (grid, block, tile index, box), so an
// item that nobody else holds any more is as good as a new one: reusing it saves allocating and
// freeing one item per tile per cycle. An item still held elsewhere (a routine kept it) is replaced,
// never shared between two holders.
#pragma once

#include <korch/block.hpp>
#include <korch/grid.hpp>
#include <korch/tile.hpp>

#include <memory>
#include <vector>

namespace korch {

class ItemCache {
 public:
  // Forgets every item unless they were made for this grid object with this layout. Call it once
  // before asking for items of `grid`; not thread-safe (the distributing thread owns the cache).
  void bind(const Grid& grid);
  std::shared_ptr<Tile> tile(int block, int tile);
  std::shared_ptr<Block> block(int block);

 private:
  const Grid* grid_ = nullptr;
  int n_blocks_ = 0;
  std::vector<Box> tile_boxes_;
  std::vector<std::shared_ptr<Tile>> tiles_;  // [block * tiles_per_block + tile]
  std::vector<std::shared_ptr<Block>> blocks_;
};

}  // namespace korch
