// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/item_cache.hpp>

namespace korch {

void ItemCache::bind(const DataSource& source) {
  if (source_ == &source && stamp_ == source.layout_stamp()) return;
  source_ = &source;
  stamp_ = source.layout_stamp();
  const auto n = static_cast<std::size_t>(source.n_blocks());
  tiles_.assign(n, {});
  for (std::size_t b = 0; b < n; ++b) tiles_[b].assign(source.tiles_of(static_cast<int>(b)).size(), nullptr);
  blocks_.assign(n, nullptr);
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
  if (source_ == nullptr) throw Error("item cache: tile() before bind(): bind the cache to a data source first");
  if (block < 0 || static_cast<std::size_t>(block) >= tiles_.size() || tile < 0 ||
      static_cast<std::size_t>(tile) >= tiles_[static_cast<std::size_t>(block)].size()) {
    return std::make_shared<Tile>(*source_, block, tile);  // throws the Tile's own error
  }
  auto& slot = tiles_[static_cast<std::size_t>(block)][static_cast<std::size_t>(tile)];
  return reuse_or_make(slot, [&] { return std::make_shared<Tile>(*source_, block, tile); });
}

std::shared_ptr<Block> ItemCache::block(int block) {
  if (source_ == nullptr) throw Error("item cache: block() before bind(): bind the cache to a data source first");
  if (block < 0 || static_cast<std::size_t>(block) >= blocks_.size())
    return std::make_shared<Block>(*source_, block);  // throws
  return reuse_or_make(blocks_[static_cast<std::size_t>(block)],
                       [&] { return std::make_shared<Block>(*source_, block); });
}

}  // namespace korch
