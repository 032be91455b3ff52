// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/block.hpp>

#include <korch/tile.hpp>

#include <fmt/format.h>

namespace korch {

Block::Block(const DataSource& source, int block) : source_(&source), block_(block) { (void)source.block(block); }

// The global id: on a rank that stores part of the grid, errors name the block the user knows.
std::string Block::describe() const { return fmt::format("block {} (level {})", meta().global_id, meta().level); }

std::vector<std::shared_ptr<Tile>> Block::tiles() const {
  const int n = static_cast<int>(source_->tiles_of(block_).size());
  std::vector<std::shared_ptr<Tile>> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t) out.push_back(std::make_shared<Tile>(*source_, block_, t));
  return out;
}

std::vector<std::shared_ptr<Block>> all_blocks(const DataSource& source) {
  std::vector<std::shared_ptr<Block>> out;
  for (int b = 0; b < source.n_blocks(); ++b) out.push_back(std::make_shared<Block>(source, b));
  return out;
}

std::vector<std::shared_ptr<Tile>> all_tiles(const DataSource& source) {
  std::vector<std::shared_ptr<Tile>> out;
  for (int b = 0; b < source.n_blocks(); ++b) {
    const int n = static_cast<int>(source.tiles_of(b).size());
    for (int t = 0; t < n; ++t) out.push_back(std::make_shared<Tile>(source, b, t));
  }
  return out;
}

}  // namespace korch
