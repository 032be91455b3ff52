#include <korch/block.hpp>

#include <korch/tile.hpp>

#include <fmt/format.h>

namespace korch {

Block::Block(const Grid& grid, int block) : grid_(&grid), block_(block) { (void)grid.block(block); }

// The global id: on a rank that stores part of the grid, errors name the block the user knows.
std::string Block::describe() const { return fmt::format("block {} (level {})", meta().global_id, meta().level); }

std::vector<std::shared_ptr<Tile>> Block::tiles() const {
  std::vector<std::shared_ptr<Tile>> out;
  out.reserve(static_cast<std::size_t>(grid_->tiles_per_block()));
  for (int t = 0; t < grid_->tiles_per_block(); ++t) out.push_back(std::make_shared<Tile>(*grid_, block_, t));
  return out;
}

std::vector<std::shared_ptr<Block>> all_blocks(const Grid& grid) {
  std::vector<std::shared_ptr<Block>> out;
  for (int b = 0; b < grid.n_blocks(); ++b) out.push_back(std::make_shared<Block>(grid, b));
  return out;
}

std::vector<std::shared_ptr<Tile>> all_tiles(const Grid& grid) {
  std::vector<std::shared_ptr<Tile>> out;
  for (int b = 0; b < grid.n_blocks(); ++b)
    for (int t = 0; t < grid.tiles_per_block(); ++t) out.push_back(std::make_shared<Tile>(grid, b, t));
  return out;
}

}  // namespace korch
