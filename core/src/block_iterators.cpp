// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/block_iterators.hpp>
#include <korch/data_source.hpp>

namespace korch {

void FilteredBlocks::begin(const DataSource& source) {
  blocks_.clear();
  next_ = 0;
  for (int b = 0; b < source.n_blocks(); ++b)
    if (keep(source, b)) blocks_.push_back(b);
}

std::optional<int> FilteredBlocks::next() {
  if (next_ >= blocks_.size()) return std::nullopt;
  return blocks_[next_++];
}

bool LeafBlocks::keep(const DataSource& source, int block) const { return source.is_leaf(block); }

bool LevelBlocks::keep(const DataSource& source, int block) const { return source.block(block).level == level_; }

}  // namespace korch
