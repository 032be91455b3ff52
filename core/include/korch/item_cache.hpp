// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ItemCache: the tile and block items of one data source, kept by the Runtime from one execution cycle to
// the next. Tiles and blocks are immutable views of the grid (grid, block, tile index, box), so an
// item that nobody else holds any more is as good as a new one: reusing it saves allocating and
// freeing one item per tile per cycle. An item still held elsewhere (a routine kept it) is replaced,
// never shared between two holders.
#pragma once

#include <korch/block.hpp>
#include <korch/data_source.hpp>
#include <korch/tile.hpp>

#include <cstdint>
#include <memory>
#include <vector>

namespace korch {

class ItemCache {
 public:
  // Forgets every item unless they were made for this source with its present layout
  // (DataSource::layout_stamp). Call it once before asking for items of `source`; not thread-safe
  // (the distributing thread owns the cache).
  void bind(const DataSource& source);
  std::shared_ptr<Tile> tile(int block, int tile);
  std::shared_ptr<Block> block(int block);

 private:
  const DataSource* source_ = nullptr;
  std::uint64_t stamp_ = 0;
  std::vector<std::vector<std::shared_ptr<Tile>>> tiles_;  // [block][tile]
  std::vector<std::shared_ptr<Block>> blocks_;
};

}  // namespace korch
