// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/backend/memory_pool.hpp>
#include <korch/backend/spaces.hpp>
#include <korch/error.hpp>

#include <Kokkos_Core.hpp>

#include <map>
#include <mutex>
#include <vector>

namespace korch {

const char* to_string(PoolMemory memory) noexcept {
  return memory == PoolMemory::pinned_host ? "pinned host" : "device";
}

namespace detail {

struct PoolState {
  std::string name;
  PoolMemory memory;
  mutable std::mutex mutex;
  std::map<std::size_t, std::vector<void*>> free_blocks;  // by capacity
  PoolStats stats;
  std::size_t limit = 0;  // on stats.allocated_bytes; 0: none

  ~PoolState() {
    for (auto& [capacity, blocks] : free_blocks) {
      for (void* p : blocks) free_block(p);
    }
  }

  void* allocate_block(std::size_t capacity) {
    if (memory == PoolMemory::pinned_host) {
      return Kokkos::kokkos_malloc<PinnedHostMemSpace>("korch pool " + name, capacity);
    }
    return Kokkos::kokkos_malloc<DeviceMemSpace>("korch pool " + name, capacity);
  }
  void free_block(void* p) const {
    if (memory == PoolMemory::pinned_host) {
      Kokkos::kokkos_free<PinnedHostMemSpace>(p);
    } else {
      Kokkos::kokkos_free<DeviceMemSpace>(p);
    }
  }
  // With the mutex held: frees cached blocks (largest first) until `needed` more bytes fit under
  // the limit or the cache is empty. Returns the bytes freed.
  std::size_t free_cached_until_fits(std::size_t needed) {
    std::size_t freed = 0;
    auto fits = [&] { return limit == 0 || stats.allocated_bytes + needed <= limit; };
    for (auto it = free_blocks.rbegin(); it != free_blocks.rend() && !fits(); ++it) {
      auto& blocks = it->second;
      while (!blocks.empty() && !fits()) {
        free_block(blocks.back());
        blocks.pop_back();
        stats.allocated_bytes -= it->first;
        freed += it->first;
      }
    }
    return freed;
  }

  void give_back(void* p, std::size_t size, std::size_t capacity) noexcept {
    std::lock_guard<std::mutex> lock(mutex);
    stats.outstanding_bytes -= size;
    ++stats.releases;
    try {
      free_blocks[capacity].push_back(p);
    } catch (...) {
      stats.allocated_bytes -= capacity;
      free_block(p);
    }
  }
};

}  // namespace detail

PoolBuffer::PoolBuffer(PoolBuffer&& other) noexcept
    : pool_(std::move(other.pool_)), data_(other.data_), size_(other.size_), capacity_(other.capacity_) {
  other.data_ = nullptr;
  other.size_ = other.capacity_ = 0;
}

PoolBuffer& PoolBuffer::operator=(PoolBuffer&& other) noexcept {
  if (this != &other) {
    release();
    pool_ = std::move(other.pool_);
    data_ = other.data_;
    size_ = other.size_;
    capacity_ = other.capacity_;
    other.data_ = nullptr;
    other.size_ = other.capacity_ = 0;
  }
  return *this;
}

void PoolBuffer::release() noexcept {
  if (data_ == nullptr) return;
  pool_->give_back(data_, size_, capacity_);
  data_ = nullptr;
  size_ = capacity_ = 0;
  pool_.reset();
}

MemoryPool::MemoryPool(std::string name, PoolMemory memory, std::size_t limit_bytes)
    : state_(std::make_shared<detail::PoolState>()) {
  state_->name = std::move(name);
  state_->memory = memory;
  state_->limit = limit_bytes;
}

MemoryPool::~MemoryPool() = default;

const std::string& MemoryPool::name() const noexcept { return state_->name; }
PoolMemory MemoryPool::memory() const noexcept { return state_->memory; }

PoolBuffer MemoryPool::acquire(std::size_t bytes) {
  if (bytes == 0) {
    throw Error::format("memory pool '{}' ({}): acquire(0) asks for nothing: ask for at least one byte", state_->name,
                        to_string(state_->memory));
  }
  std::size_t capacity = 4096;
  while (capacity < bytes) capacity *= 2;
  PoolBuffer buffer;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    auto it = state_->free_blocks.find(capacity);
    if (it != state_->free_blocks.end() && !it->second.empty()) {
      buffer.data_ = it->second.back();
      it->second.pop_back();
    }
  }
  if (buffer.data_ == nullptr) {
    {
      // Reserve the bytes under the limit before allocating (other threads may acquire meanwhile).
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->free_cached_until_fits(capacity);
      if (state_->limit != 0 && state_->stats.allocated_bytes + capacity > state_->limit) {
        throw Error::format(
            "memory pool '{}' ({}): acquiring {} bytes (a {}-byte block) would pass the pool's limit of {} bytes: "
            "{} bytes are in use by data packets and nothing cached is left to free; raise the limit "
            "(RuntimeOptions::{}_pool_limit) or use fewer or smaller data packets",
            state_->name, to_string(state_->memory), bytes, capacity, state_->limit, state_->stats.allocated_bytes,
            state_->memory == PoolMemory::device ? "device" : "pinned");
      }
      state_->stats.allocated_bytes += capacity;
    }
    try {
      buffer.data_ = state_->allocate_block(capacity);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->stats.allocated_bytes -= capacity;
      throw Error::format("memory pool '{}' ({}): could not allocate {} bytes ({}): use smaller data packets",
                          state_->name, to_string(state_->memory), capacity, e.what());
    }
  }
  buffer.pool_ = state_;
  buffer.size_ = bytes;
  buffer.capacity_ = capacity;
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->stats.outstanding_bytes += bytes;
  ++state_->stats.acquisitions;
  if (state_->stats.outstanding_bytes > state_->stats.high_water_bytes) {
    state_->stats.high_water_bytes = state_->stats.outstanding_bytes;
  }
  return buffer;
}

PoolStats MemoryPool::stats() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->stats;
}

std::size_t MemoryPool::limit_bytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->limit;
}

void MemoryPool::set_limit_bytes(std::size_t limit_bytes) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->limit = limit_bytes;
  state_->free_cached_until_fits(0);
}

std::size_t MemoryPool::trim() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  std::size_t freed = 0;
  for (auto& [capacity, blocks] : state_->free_blocks) {
    for (void* p : blocks) state_->free_block(p);
    freed += capacity * blocks.size();
    state_->stats.allocated_bytes -= capacity * blocks.size();
    blocks.clear();
  }
  return freed;
}

void MemoryPool::reset_high_water() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->stats.high_water_bytes = state_->stats.outstanding_bytes;
}

}  // namespace korch
