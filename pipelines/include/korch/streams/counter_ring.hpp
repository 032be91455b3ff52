// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CounterRing: the storage that SpscRing and CommitQueue share. Slots are
// indexed by monotonically increasing 64-bit counters (slot = counter % capacity). The producer owns
// `back_` (release store after writing the slot) and may write while back < front + capacity; a
// consumer reads at a cursor it owns (SpscRing: front itself; CommitQueue: its read pointer) while
// cursor < back. Each side keeps a plain cached copy of the other side's counter and reloads it
// (acquire) only when the copy says full or empty: a stale copy is always conservative. The
// producer or consumer may change over time as long as the hand-over itself synchronizes (korch's
// scheduler activates a continuation with a release/acquire pair); the caches pass on with the role.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace korch::streams {

template <class T>
class CounterRing {
 public:
  std::size_t capacity() const noexcept { return slots_.size(); }

 protected:
  explicit CounterRing(std::size_t capacity) : slots_(capacity) {}
  CounterRing(const CounterRing&) = delete;
  CounterRing& operator=(const CounterRing&) = delete;

  // Producer side. False when full (back == front + capacity).
  bool write_back(const T& value) {
    const std::uint64_t back = back_.load(std::memory_order_relaxed);
    if (back - front_cache_ == slots_.size()) {
      front_cache_ = front_.load(std::memory_order_acquire);
      if (back - front_cache_ == slots_.size()) return false;
    }
    slots_[back % slots_.size()] = value;
    back_.store(back + 1, std::memory_order_release);
    return true;
  }
  // Consumer side: the element at `cursor`, which then advances. False when cursor == back.
  bool read_at(std::atomic<std::uint64_t>& cursor, T& out) {
    const std::uint64_t at = cursor.load(std::memory_order_relaxed);
    if (back_cache_ == at) {
      back_cache_ = back_.load(std::memory_order_acquire);
      if (back_cache_ == at) return false;
    }
    out = slots_[at % slots_.size()];
    cursor.store(at + 1, std::memory_order_release);
    return true;
  }

  std::vector<T> slots_;
  // One cache line each for what different threads write: front_ (the consumer, or CommitQueue's
  // committer), back_cache_ (the reading consumer), back_ and front_cache_ (the producer).
  alignas(64) std::atomic<std::uint64_t> front_{0};  // first slot the producer may not overwrite
  alignas(64) std::uint64_t back_cache_ = 0;         // the consumer's copy of back_ (never above it)
  alignas(64) std::atomic<std::uint64_t> back_{0};   // next slot the producer writes
  std::uint64_t front_cache_ = 0;                    // the producer's copy of front_ (never above it)
};

}  // namespace korch::streams
