// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The asynchronous guard-cell iterator (the design's first level of parallelism): a BlockIterator
// that starts a guard-cell fill when the cycle's distributor begins and hands out each block as
// soon as its guard cells are valid — the blocks that need no other rank's cells first (their
// guard cells copied just before), then the others as their messages arrive — so that the teams
// compute while messages are in flight (docs/ranks.md). Before a block goes out, every block that
// copies guard cells from its interior has made those copies: guard cells hold the values of the
// cycle's start, and the cycle may update the filled variables in place.
//
//   korch::GuardCellIterator blocks(exchange, first_var, n_vars);
//   runtime.execute(bundle, configuration, grid, &blocks);   // the exchange's own source: a Grid or
//                                                            // a code's BlockList with its neighbours
#pragma once

#include <korch/block_iterator.hpp>
#include <korch/guard_cell_exchange.hpp>

#include <cstddef>
#include <deque>

namespace korch {

class GuardCellIterator : public BlockIterator {
 public:
  // Fills the guard cells of variables [first, first + count) of the exchange's source.
  GuardCellIterator(GuardCellExchange& exchange, int first, int count);
  // The variables of the following cycles' fills.
  void set_variables(int first, int count);

  void begin(const DataSource& source) override;
  std::optional<int> next() override;
  void abandon() noexcept override;

  // Blocks handed out while messages of the last fill were still outstanding.
  std::size_t blocks_before_last_message() const noexcept { return early_; }

 private:
  GuardCellExchange& exchange_;
  int first_, count_;
  std::deque<int> ready_;
  std::size_t early_ = 0;
};

}  // namespace korch
