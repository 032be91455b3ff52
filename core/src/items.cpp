#include <korch/action_metadata.hpp>
#include <korch/block.hpp>
#include <korch/data_packet.hpp>
#include <korch/data_type.hpp>
#include <korch/tile.hpp>

#include <fmt/format.h>

namespace korch {

const char* to_string(DataType type) noexcept {
  switch (type) {
    case DataType::tile: return "tile";
    case DataType::block: return "block";
    case DataType::packet_of_blocks: return "packet_of_blocks";
    case DataType::packet_of_tiles: return "packet_of_tiles";
    case DataType::action_metadata: return "action_metadata";
  }
  return "?";
}

std::optional<DataType> parse_data_type(const std::string& text) {
  for (DataType t : {DataType::tile, DataType::block, DataType::packet_of_blocks, DataType::packet_of_tiles,
                     DataType::action_metadata}) {
    if (text == to_string(t)) return t;
  }
  return std::nullopt;
}

std::optional<DataType> data_type_of(const DataItem& item) noexcept {
  if (dynamic_cast<const Tile*>(&item)) return DataType::tile;
  if (dynamic_cast<const Block*>(&item)) return DataType::block;
  if (auto* p = dynamic_cast<const DataPacket*>(&item)) return p->data_type();
  if (dynamic_cast<const ActionMetadata*>(&item)) return DataType::action_metadata;
  return std::nullopt;
}

Tile::Tile(const Grid& grid, int block, int tile) : grid_(&grid), block_(block), tile_(tile) {
  (void)grid.block(block);
  if (tile < 0 || tile >= grid.tiles_per_block()) {
    throw Error::format("tile {} of block {} does not exist: blocks have tiles 0..{}", tile, block,
                        grid.tiles_per_block() - 1);
  }
  box_ = grid.tile_box(tile);
}

std::string Tile::describe() const {
  return fmt::format("tile {} of block {} (level {})", tile_, block_, grid_->block(block_).level);
}

Block::Block(const Grid& grid, int block) : grid_(&grid), block_(block) { (void)grid.block(block); }

std::string Block::describe() const { return fmt::format("block {} (level {})", block_, meta().level); }

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

std::string ActionMetadata::describe() const {
  return fmt::format("action metadata of block {}{}{}", block_, tag_.empty() ? "" : " tag ", tag_);
}

}  // namespace korch
