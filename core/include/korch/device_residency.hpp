// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DeviceResidency: which side holds a valid copy of each (block, variable) of a data source that
// keeps its blocks in device memory between cycles (docs/residency.md): a resident korch::Grid
// (GridResidency) or a BlockList of device arrays (BlockListResidency). The two differ in where
// the copies are and how one (block, variable) moves between them; the rule is the same:
//
// A side that is about to use a variable of a block copies it from the other side first when its
// own copy is stale; the side that may have written a variable marks the other side's copy stale.
// A (block, variable) a packet carries is held by the device from begin_device_use() to
// end_device_use(): host accessors leave it alone meanwhile (no copy back, flags unchanged), as a
// kernel may be writing it.
//
// Host memory: a block's host copy is kept only while something on the host needs it. At the end
// of every cycle (Runtime::execute), each block that the host did not use since the last such
// release, that no packet holds and whose every variable is valid on the device loses its host
// copy: the copy is marked stale and its physical pages go back to the system (release_host_pages).
// The addresses stay, and the next host use brings the block back from the device as for any
// stale copy.
//
// Thread-safe: one mutex guards the validity flags and the copies, so that a copy and the flags
// that describe it change together.
#pragma once

#include <korch/backend/thread_spaces.hpp>
#include <korch/transfer_bytes.hpp>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace korch {

// Where a block's cells are in device memory: the address of (var 0, i 0, j 0, k 0) of its stored
// box and the distance in doubles between neighbours along var, i, j and k.
struct DeviceBlockLayout {
  double* data = nullptr;
  std::array<std::int64_t, 4> stride{0, 0, 0, 0};
};

class DeviceResidency {
 public:
  enum class Start { valid_on_host, valid_on_device };
  DeviceResidency(int n_blocks, int n_vars, Start start);
  virtual ~DeviceResidency() = default;
  DeviceResidency(const DeviceResidency&) = delete;
  DeviceResidency& operator=(const DeviceResidency&) = delete;

  int n_blocks() const noexcept { return n_blocks_; }
  int n_vars() const noexcept { return n_vars_; }
  bool host_valid(int block, int var) const;
  bool device_valid(int block, int var) const;
  bool held_on_device(int block, int var) const;
  virtual DeviceBlockLayout device_layout(int block) const = 0;

  // Before a device action reads `reads` and may write `writes` of `blocks`: copies host -> device,
  // on `instance`, each read (block, variable) whose device copy is stale and fences the instance;
  // marks those both read and written valid on the device alone; holds reads and writes on the
  // device. Returns the bytes copied.
  std::uint64_t begin_device_use(const std::vector<int>& blocks, const std::vector<int>& reads,
                                 const std::vector<int>& writes, const DeviceTaskSpace& instance);
  // After the device action (finished or failed): the writes are valid on the device alone, and
  // what begin_device_use() held is released.
  void end_device_use(const std::vector<int>& blocks, const std::vector<int>& reads, const std::vector<int>& writes);
  // Before the host uses a block: copies device -> host each variable whose host copy is stale.
  // host_may_write: the caller may write the block, so every device copy of it becomes stale.
  void make_host_valid(int block, bool host_may_write);
  void make_all_host_valid(bool host_may_write);
  // Copies host -> device every variable valid on the host alone, then leaves every variable valid
  // on the device alone (variables a packet holds are left as they are).
  void make_all_device_only();
  // For an operation on variables [first, first + count) of every block (the guard-cell fill), the
  // side each block should use (1: the device, 0: the host): the device where all of them are valid
  // there, the host otherwise.
  std::vector<unsigned char> sides(int first, int count) const;
  // Before such an operation, which may write them: copies each (block, variable) of the range
  // whose copy on the side `on_device[block]` names is stale from the other side, fences, and marks
  // it valid on that side alone. Throws korch::Error when a packet holds one of them. Returns the
  // bytes copied.
  TransferBytes claim(const std::vector<unsigned char>& on_device, int first, int count);

  // Everything this residency copied since it was made, by direction.
  TransferBytes transfers() const;

  // Drops the host copy of every block that the host has not used since the last call, that no
  // packet holds and whose every variable is valid on the device: marks it stale and hands its
  // pages back. The runtime calls it at the end of each cycle; a code may call it too (twice in a
  // row drops every such block, e.g. before a phase that needs host memory). Returns the bytes
  // handed back.
  std::size_t release_unused_host_copies();
  // Keep every host copy from cycle to cycle instead (the runtime then never calls the above): for
  // a code that reads its blocks on the host every few cycles and has the host memory to spare,
  // which then saves bringing the pages back each time. Off by default.
  void keep_host_copies(bool keep) noexcept { keep_host_copies_ = keep; }
  bool keeps_host_copies() const noexcept { return keep_host_copies_; }
  // Bytes of the host copies kept now: blocks whose host copy holds data or may be used (their
  // whole span; what is in physical memory may be less, see resident_host_bytes).
  std::size_t host_bytes_kept() const;
  // Bytes of the host copies in physical memory now (whole pages inside each block's span).
  std::size_t host_bytes_resident() const;

 protected:
  // One (block, variable) from the host copy to the device copy on `instance` (not fenced), and
  // back (finished on return); each returns the bytes it moved. Called with the mutex held.
  virtual std::uint64_t copy_var_to_device(int block, int var, const DeviceTaskSpace& instance) = 0;
  virtual std::uint64_t copy_var_to_host(int block, int var) = 0;
  // Names the data in errors ("resident grid", "block list 'heat'").
  virtual std::string kind() const = 0;
  // The host copy of a block: its first byte and its span in bytes (empty while it has none).
  struct HostSpan {
    char* begin = nullptr;
    std::size_t bytes = 0;
  };
  virtual HostSpan host_span(int block) const = 0;
  // Appends a block, its variables as the constructor's `start` says.
  void add_block();

 private:
  static constexpr unsigned char host_bit = 1, device_bit = 2;
  std::size_t flag_index(int block, int var) const;
  void host_valid_locked(int block, bool host_may_write);
  void mark_device_only_locked(const std::vector<int>& blocks, const std::vector<int>& writes);
  void host_used_locked(int block);
  bool host_copy_unused_locked(int block) const;

  int n_blocks_ = 0;
  int n_vars_ = 0;
  unsigned char start_flags_ = host_bit;
  mutable std::mutex mutex_;
  std::vector<unsigned char> valid_;  // per (block, var): host_bit | device_bit
  std::vector<std::uint32_t> held_;   // per (block, var): packets on the device that carry it
  // Per block: the host used its copy since the last release; its host copy may hold pages.
  std::vector<unsigned char> host_used_, host_kept_;
  TransferBytes moved_;
  std::atomic<bool> keep_host_copies_{false};
};

}  // namespace korch
