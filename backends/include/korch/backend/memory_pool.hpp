// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Memory pools for data packets: pinned host memory (what the device copies from asynchronously)
// and device memory (the backend's DeviceMemSpace). On a CPU-only build both are HostSpace, but
// every buffer is still its own allocation, so packing, transfers and unpacking really happen.
//
// A pool hands out PoolBuffers. Freed blocks are kept on per-size-class free lists and reused;
// allocations grow the pool when no free block fits (a pool never blocks, so a pipeline can never
// dead-lock on memory). Statistics are public: outstanding bytes (handed out, not yet released),
// the high-water mark of outstanding bytes, and the bytes allocated from the memory space.
// A pool may be given a limit on the bytes it takes from its memory space (a GPU shared with other
// work, pinned memory that the OS must not run out of): an acquisition that would pass it first
// returns cached blocks of other sizes to the memory space, and if that is not enough it throws a
// korch::Error naming the pool, the request and the bytes in use (the cycle fails; nothing blocks).
// A PoolBuffer returns its block when release() is called (safe early and twice) or when the last
// owner drops it. Blocks go back to the memory space when the pool and every buffer are gone; that
// must happen before Kokkos::finalize.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace korch {

enum class PoolMemory { pinned_host, device };
const char* to_string(PoolMemory memory) noexcept;

struct PoolStats {
  std::size_t outstanding_bytes = 0;  // handed out and not yet released
  std::size_t high_water_bytes = 0;   // most outstanding bytes at any instant
  std::size_t allocated_bytes = 0;    // taken from the memory space (outstanding + cached)
  std::size_t acquisitions = 0;
  std::size_t releases = 0;
};

namespace detail {
struct PoolState;
}

class PoolBuffer {
 public:
  PoolBuffer() = default;
  ~PoolBuffer() { release(); }
  PoolBuffer(PoolBuffer&& other) noexcept;
  PoolBuffer& operator=(PoolBuffer&& other) noexcept;
  PoolBuffer(const PoolBuffer&) = delete;
  PoolBuffer& operator=(const PoolBuffer&) = delete;

  void* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }  // bytes requested
  std::size_t capacity() const noexcept { return capacity_; }
  explicit operator bool() const noexcept { return data_ != nullptr; }
  // Returns the block to its pool. Safe to call on an empty buffer and more than once.
  void release() noexcept;

 private:
  friend class MemoryPool;
  std::shared_ptr<detail::PoolState> pool_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
};

class MemoryPool {
 public:
  // limit_bytes: the most bytes the pool may take from its memory space; 0 means no limit.
  MemoryPool(std::string name, PoolMemory memory, std::size_t limit_bytes = 0);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  const std::string& name() const noexcept;
  PoolMemory memory() const noexcept;
  // A block of at least `bytes` bytes (bytes > 0), aligned to 256 bytes. Thread-safe.
  PoolBuffer acquire(std::size_t bytes);
  PoolStats stats() const;
  std::size_t outstanding_bytes() const { return stats().outstanding_bytes; }
  std::size_t high_water_bytes() const { return stats().high_water_bytes; }
  // Starts a new high-water measurement at the current outstanding bytes.
  void reset_high_water();
  std::size_t limit_bytes() const;
  // A new limit (0: none). Lowering it below the bytes taken returns cached blocks as far as they
  // go; blocks in use are never taken away, the limit then applies to the next acquisitions.
  void set_limit_bytes(std::size_t limit_bytes);
  // Returns every cached (free) block to the memory space; the bytes returned.
  std::size_t trim();

 private:
  std::shared_ptr<detail::PoolState> state_;
};

}  // namespace korch
