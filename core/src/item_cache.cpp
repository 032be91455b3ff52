#include <korch/error.hpp>
#include <korch/item_cache.hpp>

namespace korch {

void ItemCache::bind(const Grid& grid) {
  if (grid_ == &grid && n_blocks_ == grid.n_blocks() && tile_boxes_ == grid.tile_boxes()) return;
  grid_ = &grid;
  n_blocks_ = grid.n_blocks();
  tile_boxes_ = grid.tile_boxes();
  tiles_.assign(static_cast<std::size_t>(n_blocks_) * tile_boxes_.size(), nullptr);
  blocks_.assign(static_cast<std::size_t>(n_blocks_), nullptr);
}

namespace {
// The cached item when this cache is its only holder, else a new one (which the cache keeps).
template <class Item, class Make>
std::shared_ptr<Item> reuse_or_make(std::shared_ptr<Item>& slot, Make&& make) {
  if (!slot || slot.use_count() != 1) slot = make();
  return slot;
}
}  // namespace

std::shared_ptr<Tile> ItemCache::tile(int block, int tile) {
  if (grid_ == nullptr) throw Error("item cache: tile() before bind(): bind the cache to a grid first");
  const int per_block = static_cast<int>(tile_boxes_.size());
  if (block < 0 || block >= n_blocks_ || tile < 0 || tile >= per_block) {
    return std::make_shared<Tile>(*grid_, block, tile);  // throws the Tile's own error
  }
  auto& slot = tiles_[static_cast<std::size_t>(block) * tile_boxes_.size() + static_cast<std::size_t>(tile)];
  return reuse_or_make(slot, [&] { return std::make_shared<Tile>(*grid_, block, tile); });
}

std::shared_ptr<Block> ItemCache::block(int block) {
  if (grid_ == nullptr) throw Error("item cache: block() before bind(): bind the cache to a grid first");
  if (block < 0 || block >= n_blocks_) return std::make_shared<Block>(*grid_, block);  // throws
  return reuse_or_make(blocks_[static_cast<std::size_t>(block)], [&] { return std::make_shared<Block>(*grid_, block); });
}

}  // namespace korch
