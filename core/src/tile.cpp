#include <korch/tile.hpp>

#include <korch/error.hpp>

#include <fmt/format.h>

namespace korch {

Tile::Tile(const Grid& grid, int block, int tile) : grid_(&grid), block_(block), tile_(tile) {
  (void)grid.block(block);
  if (tile < 0 || tile >= grid.tiles_per_block()) {
    throw Error::format("tile {} of block {} does not exist: blocks have tiles 0..{}", tile, block,
                        grid.tiles_per_block() - 1);
  }
  box_ = grid.tile_box(tile);
}

std::string Tile::describe() const {
  // Global block ids: on a rank that stores part of the grid, errors name the block the user knows.
  const auto& m = grid_->block(block_);
  return fmt::format("tile {} of block {} (level {})", tile_, m.global_id, m.level);
}

}  // namespace korch
