// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ReadyBlocks: the asynchronous iterator for a code that fills its blocks' guard cells itself (its
// own halo exchange, its own fill across levels; docs/data-sources.md, "A code's own guard-cell
// fill"). The code marks each block ready once its guard cells are valid, and the cycle's
// distributor hands it out then, so that the teams compute on the first blocks while the code's
// messages for the others are still in flight.
//
// Marks come from the poll routine, which the distributor calls on the thread that called
// Runtime::execute whenever no marked block is waiting (the code tests its requests there, as with
// MPI_Testsome), or from any other thread. A mark made between cycles counts for the next cycle:
// the code may start its fill before Runtime::execute. Every block of the source must be marked
// once per cycle: a block marked twice, a block the source does not have, or no mark for the stall
// limit is a korch::Error naming the blocks (the cycle fails; nothing waits forever).
//
//   korch::ReadyBlocks ready([&](korch::ReadyBlocks& r) {
//     for (int b : my_halos.completed()) r.mark_ready(b);   // MPI_Testsome over the code's requests
//   });
//   my_halos.start();
//   runtime.execute(bundle, configuration, blocks, &ready);
#pragma once

#include <korch/block_iterator.hpp>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace korch {

struct ReadyBlocksOptions {
  // No block marked for this long while some are still missing: the cycle fails.
  std::chrono::milliseconds stall_limit{120000};
  // Between two calls of the poll routine that marked nothing (the caller's thread sleeps meanwhile,
  // waking at once when another thread marks a block).
  std::chrono::microseconds poll_pause{20};
};

class ReadyBlocks : public BlockIterator {
 public:
  using Poll = std::function<void(ReadyBlocks&)>;
  using Options = ReadyBlocksOptions;

  // poll may be empty when other threads mark the blocks. Throws korch::Error for a stall limit or
  // poll pause below zero.
  explicit ReadyBlocks(Poll poll = {}, Options options = {});

  // The block (a DataSource id) has valid guard cells: the distributor may hand it out. Thread-safe.
  // Throws korch::Error for a negative id, a block already marked in this cycle (or, between cycles,
  // for the next one) and, during a cycle, a block the source does not have.
  void mark_ready(int block);
  // Forgets the marks made for the next cycle (after a failed cycle, before the code fills anew).
  void clear_marks();

  // Blocks handed out in the last cycle while others were still unmarked.
  std::size_t handed_out_early() const;

  void begin(const DataSource& source) override;
  std::optional<int> next() override;
  void abandon() noexcept override;

 private:
  bool waiting_for_blocks_locked() const;
  [[noreturn]] void stalled_locked() const;
  void check_and_mark_locked(int block);

  Poll poll_;
  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable marked_;
  bool in_cycle_ = false;
  std::string source_name_;
  int n_blocks_ = 0;
  std::vector<char> marked_this_cycle_;
  std::vector<int> marked_early_;  // between cycles, for the next one
  std::deque<int> ready_;
  int handed_out_ = 0;
  int marks_ = 0;
  std::size_t early_ = 0;
};

}  // namespace korch
