// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/data_source.hpp>
#include <korch/error.hpp>
#include <korch/ready_blocks.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace korch {

ReadyBlocks::ReadyBlocks(Poll poll, Options options) : poll_(std::move(poll)), options_(options) {
  if (options_.stall_limit.count() < 0 || options_.poll_pause.count() < 0)
    throw Error::format("ready blocks: stall limit {} ms and poll pause {} us: give 0 or more",
                        options_.stall_limit.count(), options_.poll_pause.count());
}

void ReadyBlocks::check_and_mark_locked(int block) {
  if (block >= n_blocks_)
    throw Error::format("ready blocks: block {} was marked ready, but the {} has blocks 0..{}", block, source_name_,
                        n_blocks_ - 1);
  char& marked = marked_this_cycle_[static_cast<std::size_t>(block)];
  if (marked)
    throw Error::format("ready blocks: block {} of the {} was marked ready twice in one cycle: mark each block once",
                        block, source_name_);
  marked = 1;
  ++marks_;
  ready_.push_back(block);
}

void ReadyBlocks::mark_ready(int block) {
  if (block < 0) throw Error::format("ready blocks: block {} was marked ready: ids start at 0", block);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!in_cycle_) {
      if (std::find(marked_early_.begin(), marked_early_.end(), block) != marked_early_.end())
        throw Error::format(
            "ready blocks: block {} was marked ready twice before the cycle: mark each block once per cycle", block);
      marked_early_.push_back(block);
      return;
    }
    check_and_mark_locked(block);
  }
  marked_.notify_one();
}

void ReadyBlocks::clear_marks() {
  std::lock_guard<std::mutex> lock(mutex_);
  marked_early_.clear();
}

std::size_t ReadyBlocks::handed_out_early() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return early_;
}

void ReadyBlocks::begin(const DataSource& source) {
  std::lock_guard<std::mutex> lock(mutex_);
  source_name_ = source.source_name();
  n_blocks_ = source.n_blocks();
  marked_this_cycle_.assign(static_cast<std::size_t>(n_blocks_), 0);
  ready_.clear();
  handed_out_ = marks_ = 0;
  early_ = 0;
  in_cycle_ = true;
  std::vector<int> early;
  early.swap(marked_early_);
  try {
    for (const int b : early) check_and_mark_locked(b);
  } catch (...) {
    in_cycle_ = false;
    throw;
  }
}

bool ReadyBlocks::waiting_for_blocks_locked() const { return ready_.empty() && handed_out_ < n_blocks_; }

void ReadyBlocks::stalled_locked() const {
  std::string missing;
  int shown = 0;
  for (int b = 0; b < n_blocks_ && shown < 8; ++b)
    if (!marked_this_cycle_[static_cast<std::size_t>(b)]) missing += fmt::format("{}{}", shown++ ? ", " : "", b);
  throw Error::format(
      "ready blocks: no block of the {} was marked ready for {} ms, with {} of {} unmarked (blocks {}{}): mark every "
      "block once per cycle (mark_ready, from the poll routine or another thread)",
      source_name_, options_.stall_limit.count(), n_blocks_ - marks_, n_blocks_, missing,
      n_blocks_ - marks_ > shown ? ", ..." : "");
}

std::optional<int> ReadyBlocks::next() {
  using Clock = std::chrono::steady_clock;
  auto last_progress = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  int marks_seen = marks_;
  while (waiting_for_blocks_locked()) {
    if (poll_) {
      lock.unlock();
      poll_(*this);  // marks through mark_ready, which takes the lock
      lock.lock();
      if (!waiting_for_blocks_locked()) break;
      marked_.wait_for(lock, options_.poll_pause);
    } else {
      marked_.wait_until(lock, last_progress + options_.stall_limit);
    }
    if (marks_ != marks_seen) {
      marks_seen = marks_;
      last_progress = Clock::now();
    } else if (Clock::now() - last_progress >= options_.stall_limit) {
      stalled_locked();
    }
  }
  if (ready_.empty()) {
    in_cycle_ = false;
    return std::nullopt;
  }
  const int block = ready_.front();
  ready_.pop_front();
  ++handed_out_;
  if (marks_ < n_blocks_) ++early_;
  return block;
}

void ReadyBlocks::abandon() noexcept {
  std::lock_guard<std::mutex> lock(mutex_);
  in_cycle_ = false;
  ready_.clear();
}

}  // namespace korch
