// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/tile.hpp>

#include <korch/error.hpp>

#include <fmt/format.h>

namespace korch {

Tile::Tile(const DataSource& source, int block, int tile) : source_(&source), block_(block), tile_(tile) {
  const auto& tiles = source.tiles_of(block);
  if (tile < 0 || static_cast<std::size_t>(tile) >= tiles.size()) {
    throw Error::format("tile {} of block {} of the {} does not exist: the block has tiles 0..{}", tile, block,
                        source.source_name(), tiles.size() - 1);
  }
  box_ = tiles[static_cast<std::size_t>(tile)];
}

std::string Tile::describe() const {
  // Global block ids: on a rank that stores part of the grid, errors name the block the user knows.
  const auto& m = source_->block(block_);
  return fmt::format("tile {} of block {} (level {})", tile_, m.global_id, m.level);
}

}  // namespace korch
