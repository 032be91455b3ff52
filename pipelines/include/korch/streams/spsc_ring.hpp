// SpscRing: the lock-free single-producer single-consumer ring used where a stream queue has one
// consumer (seed 003 section 3, "Sora synchronization queues").
//
// Indices are monotonically increasing 64-bit counters; slot = index % capacity. The producer owns
// `back_` (release store after writing the slot), the consumer owns `front_` (release store after
// reading the slot); each side reads the other's counter with acquire. The producer or consumer may
// change over time (the next component of a bind) as long as the hand-over itself synchronizes
// (korch's scheduler activates a continuation with a release/acquire pair). Each side keeps a
// cached copy of the other side's counter (a plain field only that side touches) and reloads it only
// when the cached value says full/empty: a stale copy is always conservative, and the hand-over
// passes the cache on with the role.
#pragma once

#include <korch/error.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace korch::streams {

template <class T>
class SpscRing {
 public:
  SpscRing(std::string name, std::size_t capacity) : name_(std::move(name)), slots_(capacity) {
    if (capacity == 0) {
      throw Error::format("stream queue '{}': capacity 0 can hold nothing; give it at least 1 slot",
                          name_);
    }
  }
  SpscRing(const SpscRing&) = delete;
  SpscRing& operator=(const SpscRing&) = delete;

  const std::string& name() const noexcept { return name_; }
  std::size_t capacity() const noexcept { return slots_.size(); }

  // Producer side. False when full.
  bool try_push(const T& value) {
    const std::uint64_t back = back_.load(std::memory_order_relaxed);
    if (back - front_cache_ == slots_.size()) {
      front_cache_ = front_.load(std::memory_order_acquire);
      if (back - front_cache_ == slots_.size()) return false;
    }
    slots_[back % slots_.size()] = value;
    back_.store(back + 1, std::memory_order_release);
    return true;
  }
  // Consumer side. False when empty.
  bool try_pop(T& out) {
    const std::uint64_t front = front_.load(std::memory_order_relaxed);
    if (back_cache_ == front) {
      back_cache_ = back_.load(std::memory_order_acquire);
      if (back_cache_ == front) return false;
    }
    out = slots_[front % slots_.size()];
    front_.store(front + 1, std::memory_order_release);
    return true;
  }

  // Snapshots (exact only when the other side is quiet).
  std::size_t size() const noexcept {
    return static_cast<std::size_t>(back_.load(std::memory_order_acquire) -
                                    front_.load(std::memory_order_acquire));
  }
  bool empty() const noexcept { return size() == 0; }
  bool full() const noexcept { return size() == slots_.size(); }
  std::uint64_t pushed() const noexcept { return back_.load(std::memory_order_acquire); }
  std::uint64_t popped() const noexcept { return front_.load(std::memory_order_acquire); }

 private:
  std::string name_;
  std::vector<T> slots_;
  alignas(64) std::atomic<std::uint64_t> front_{0};
  std::uint64_t back_cache_ = 0;   // consumer's copy of back_
  alignas(64) std::atomic<std::uint64_t> back_{0};
  std::uint64_t front_cache_ = 0;  // producer's copy of front_
};

}  // namespace korch::streams
