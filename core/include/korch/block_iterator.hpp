// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The order in which a cycle's distributor receives the grid's blocks (the design's Grid unit
// iterator). Without one, Runtime::execute hands the blocks over in id order. An iterator may
// release blocks as they become ready — GuardCellIterator releases each block as soon as its guard
// cells are valid, so that actions start while guard-cell messages are still in flight
// (docs/ranks.md).
//
// The distributor calls begin() once per cycle, then next() until it returns no block, on the
// thread that called Runtime::execute; it checks that no block comes twice and, unless the
// iterator hands out a subset on purpose (covers_every_block() false: the leaves, one level), that
// every block of the source came. block_iterators.hpp has the usual choices.
// When the cycle fails part-way it calls abandon() instead of further next() calls.
#pragma once

#include <optional>

namespace korch {

class DataSource;

class BlockIterator {
 public:
  virtual ~BlockIterator() = default;
  virtual void begin(const DataSource& source) = 0;
  // The next block (a DataSource::block id), or nothing when every block was handed out. May wait
  // until a block is ready.
  virtual std::optional<int> next() = 0;
  // The cycle ends early: drop outstanding work. Must not throw.
  virtual void abandon() noexcept {}
  // True when the iterator hands out every block of the source.
  virtual bool covers_every_block() const noexcept { return true; }
};

}  // namespace korch
