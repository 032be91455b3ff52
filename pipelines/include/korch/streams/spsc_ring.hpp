// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// SpscRing: the lock-free single-producer single-consumer ring used where a stream queue has one
// consumer.
//
// The counters, caches and memory orders are CounterRing's; front is the consumer's cursor.
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
class SpscRing : public CounterRing<T> {
  using Base = CounterRing<T>;
  using Base::back_;
  using Base::front_;
  using Base::slots_;

 public:
  SpscRing(std::string name, std::size_t capacity) : Base(capacity), name_(std::move(name)) {
    if (capacity == 0) {
      throw Error::format("stream queue '{}': capacity 0 can hold nothing; give it at least 1 slot", name_);
    }
  }
  const std::string& name() const noexcept { return name_; }

  // Producer side. False when full.
  bool try_push(const T& value) { return this->write_back(value); }
  // Consumer side. False when empty.
  bool try_pop(T& out) { return this->read_at(front_, out); }

  // Snapshots (exact only when the other side is quiet).
  std::size_t size() const noexcept {
    return static_cast<std::size_t>(back_.load(std::memory_order_acquire) - front_.load(std::memory_order_acquire));
  }
  bool empty() const noexcept { return size() == 0; }
  bool full() const noexcept { return size() == slots_.size(); }
  std::uint64_t pushed() const noexcept { return back_.load(std::memory_order_acquire); }
  std::uint64_t popped() const noexcept { return front_.load(std::memory_order_acquire); }

 private:
  std::string name_;
};

}  // namespace korch::streams
