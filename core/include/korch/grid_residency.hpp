// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GridResidency: the device copy of a resident korch::Grid (GridSpec::resident) and, per (block,
// variable), which side holds a valid copy (docs/residency.md). Both copies have the grid's layout
// (block, var, i, j, k), so one variable of one block is one contiguous range on either side and
// every copy moves whole (block, variable) ranges.
//
// The rule: a side that is about to use a variable of a block copies it from the other side first
// when its own copy is stale; the side that may have written a variable marks the other side's copy
// stale. Packets of blocks of a resident grid point into the device copy (DataPacket); the grid's
// host accessors bring blocks back to the host (Grid::block_view and the others).
//
// A (block, variable) a packet carries is held by the device from begin_device_use() to
// end_device_use(): host accessors leave it alone meanwhile (no copy back, flags unchanged), as a
// kernel may be writing it. Host actions running beside device actions on the same blocks
// (cpu_gpu_action_parallel) thus get the variables the packets do not carry.
//
// Thread-safe: one mutex guards the validity flags and the copies, so that a copy and the flags
// that describe it change together.
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/transfer_bytes.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace korch {

class GridResidency {
 public:
  using HostData = Kokkos::View<double*****, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using DeviceData = Kokkos::View<double*****, Kokkos::LayoutRight, DeviceMemSpace>;

  // Allocates the device copy of `host` (same extents); every host copy starts valid, every device
  // copy stale.
  explicit GridResidency(const HostData& host);

  int n_blocks() const noexcept { return n_blocks_; }
  int n_vars() const noexcept { return n_vars_; }
  bool host_valid(int block, int var) const;
  bool device_valid(int block, int var) const;
  // The first double of a block in the device copy (its variables one after the other, each a
  // LayoutRight (i, j, k) array over the block's stored cells).
  double* device_block(int block) const noexcept;

  // Before a device action reads `reads` and may write `writes` of `blocks`: copies host -> device,
  // on `instance`, each read (block, variable) whose device copy is stale and fences the instance;
  // marks those both read and written valid on the device alone; holds reads and writes on the
  // device. Returns the bytes copied.
  std::uint64_t begin_device_use(const std::vector<int>& blocks, const std::vector<int>& reads,
                                 const std::vector<int>& writes, const DeviceTaskSpace& instance);
  // After the device action (finished or failed): the writes are valid on the device alone, and
  // what begin_device_use() held is released.
  void end_device_use(const std::vector<int>& blocks, const std::vector<int>& reads, const std::vector<int>& writes);
  bool held_on_device(int block, int var) const;
  // Before the host uses a block: copies device -> host each variable whose host copy is stale.
  // host_may_write: the caller may write the block, so every device copy of it becomes stale.
  void make_host_valid(int block, bool host_may_write);
  void make_all_host_valid(bool host_may_write);
  // For an operation on variables [first, first + count) of every block (the guard-cell fill), the
  // side each block should use (1: the device, 0: the host): the device where all of them are valid
  // there, the host otherwise.
  std::vector<unsigned char> sides(int first, int count) const;
  // Before such an operation, which may write them: copies each (block, variable) of the range
  // whose copy on the side `on_device[block]` names is stale from the other side, fences, and marks
  // it valid on that side alone. Throws korch::Error when a packet holds one of them. Returns the
  // bytes copied.
  TransferBytes claim(const std::vector<unsigned char>& on_device, int first, int count);
  // Doubles from one variable of a block to the next (both copies).
  std::size_t doubles_per_var() const noexcept { return doubles_per_var_; }

  // Everything this residency copied since it was made, by direction.
  TransferBytes transfers() const;

 private:
  static constexpr unsigned char host_bit = 1, device_bit = 2;
  std::size_t flag_index(int block, int var) const;
  double* host_var(int block, int var) const noexcept;
  double* device_var(int block, int var) const noexcept;
  void host_valid_locked(int block, bool host_may_write);
  void mark_device_only_locked(const std::vector<int>& blocks, const std::vector<int>& writes);

  HostData host_;
  DeviceData device_;
  int n_blocks_ = 0;
  int n_vars_ = 0;
  std::size_t doubles_per_var_ = 0;
  mutable std::mutex mutex_;
  std::vector<unsigned char> valid_;  // per (block, var): host_bit | device_bit
  std::vector<std::uint32_t> held_;   // per (block, var): packets on the device that carry it
  TransferBytes moved_;
};

}  // namespace korch
