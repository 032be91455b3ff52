// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CommitQueue (docs/streams.md): the queue used where a stream queue has two or more
// consumers over time (`t1 >>> seq { t2 |>>>| c1 ; c2 }`: t2 reads optimistically, c1 commits what
// it really needed, c2 starts at the front after a rollback).
//
// Three pointers, all monotonically increasing 64-bit counters (slot = counter % capacity):
//   back  - next slot the producer writes            (producer: release store)
//   front - first element not yet committed          (committer: release store)
//   read  - the optimistic read pointer              (reader: release store)
// and three invariants, each checked; a violation throws korch::Error naming the queue,
// its three pointers and the fix, and leaves the queue unchanged:
//   (1) back never passes front + capacity   (would overwrite read-but-uncommitted data)
//   (2) front never passes read              (cannot commit a read that never happened)
//   (3) read never passes back               (cannot read data not yet written)
// The reader and the committer may be different threads (t2 and c1 above); rollback() is called
// only while no reader is active (the executor calls it after the reader task terminated). The
// slots, back, front and the caches are CounterRing's; the reader's cursor is the read pointer.
#pragma once

#include <korch/error.hpp>
#include <korch/streams/counter_ring.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace korch::streams {

template <class T>
class CommitQueue : public CounterRing<T> {
  using Base = CounterRing<T>;
  using Base::back_;
  using Base::front_;
  using Base::slots_;

 public:
  CommitQueue(std::string name, std::size_t capacity) : Base(capacity), name_(std::move(name)) {
    if (capacity == 0) {
      throw Error::format("commit queue '{}': capacity 0 can hold nothing; give it at least minQSize slots", name_);
    }
  }
  const std::string& name() const noexcept { return name_; }

  // ---- producer ----
  // False when full (back == front + capacity): invariant (1) forbids the write.
  bool try_write(const T& value) { return this->write_back(value); }
  void write(const T& value) {
    if (!try_write(value)) {
      throw Error::format(
          "commit queue '{}' is full ({}): writing would move back past front + capacity and "
          "overwrite optimistically read, uncommitted data (invariant 1); commit first or use "
          "try_write",
          name_, describe());
    }
  }

  // ---- reader ----
  // Optimistic read: returns the element at the read pointer and advances it; the element stays
  // in the queue until committed. False when read == back.
  bool try_read(T& out) { return this->read_at(read_, out); }
  T read() {
    T out{};
    if (!try_read(out)) {
      throw Error::format(
          "commit queue '{}' has nothing to read ({}): reading would move the read pointer past "
          "back (invariant 3); wait until the producer has written or use try_read",
          name_, describe());
    }
    return out;
  }

  // ---- committer ----
  // Confirms the next n optimistic reads: front += n. Throws if front would pass read (invariant 2).
  void commit(std::uint64_t n) {
    const std::uint64_t front = front_.load(std::memory_order_relaxed);
    const std::uint64_t read = read_.load(std::memory_order_acquire);
    if (front + n > read) {
      throw Error::format(
          "commit queue '{}': commit({}) would move front past the read pointer ({}): only {} "
          "reads are uncommitted (invariant 2); commit at most that many",
          name_, n, describe(), read - front);
    }
    front_.store(front + n, std::memory_order_release);
  }
  // Moves the read pointer back to front: the uncommitted reads will be read again.
  void rollback() { read_.store(front_.load(std::memory_order_acquire), std::memory_order_release); }

  // ---- observation (snapshots) ----
  std::uint64_t front() const noexcept { return front_.load(std::memory_order_acquire); }
  std::uint64_t back() const noexcept { return back_.load(std::memory_order_acquire); }
  std::uint64_t read_pointer() const noexcept { return read_.load(std::memory_order_acquire); }
  std::uint64_t uncommitted() const noexcept { return read_pointer() - front(); }
  bool full() const noexcept { return back() - front() == slots_.size(); }
  // Nothing left to read optimistically.
  bool empty_for_reader() const noexcept { return back() == read_pointer(); }
  std::string describe() const {
    return fmt::format("front={}, read={}, back={}, capacity={}", front(), read_pointer(), back(), slots_.size());
  }

 private:
  std::string name_;
  alignas(64) std::atomic<std::uint64_t> read_{0};  // the optimistic read pointer (the reader's cursor)
};

}  // namespace korch::streams
