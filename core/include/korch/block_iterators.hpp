// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The block iterators of a source with levels (the design's Grid unit iterator choices): every
// block, the leaves only, or the blocks of one level, each in id order.
//
//   korch::LeafBlocks leaves;
//   runtime.execute(bundle, configuration, mesh, &leaves);
#pragma once

#include <korch/block_iterator.hpp>

#include <vector>

namespace korch {

// Hands out, in id order, the blocks of the source that `keep` accepts.
class FilteredBlocks : public BlockIterator {
 public:
  void begin(const DataSource& source) override;
  std::optional<int> next() override;
  void abandon() noexcept override { blocks_.clear(); }

 protected:
  virtual bool keep(const DataSource& source, int block) const = 0;

 private:
  std::vector<int> blocks_;
  std::size_t next_ = 0;
};

class AllBlocks : public FilteredBlocks {
 protected:
  bool keep(const DataSource&, int) const override { return true; }
};

// The blocks that no finer block covers (DataSource::is_leaf).
class LeafBlocks : public FilteredBlocks {
 public:
  bool covers_every_block() const noexcept override { return false; }

 protected:
  bool keep(const DataSource& source, int block) const override;
};

// The blocks of one refinement level.
class LevelBlocks : public FilteredBlocks {
 public:
  explicit LevelBlocks(int level) : level_(level) {}
  bool covers_every_block() const noexcept override { return false; }
  int level() const noexcept { return level_; }

 protected:
  bool keep(const DataSource& source, int block) const override;

 private:
  int level_;
};

}  // namespace korch
