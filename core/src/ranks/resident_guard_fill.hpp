// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal: the guard-cell fill of a resident korch::Grid (docs/residency.md, "Guard cells"). Each
// block is filled on the side that holds its variables (GridResidency::sides): copies between
// blocks on the device run as one kernel over every such copy and variable; copies between a
// device block and a host block, and messages to or from other ranks' blocks on the device, go
// through a staging buffer, so only the guard cells' sources cross between host and device, never
// whole blocks. Copies between host blocks stay with the exchange's per-block host loop.
//
// The copy lists for one assignment of blocks to sides are made once and kept while the sides
// stay (a split configuration keeps its blocks where they were computed). Offsets count doubles
// from the first block's variable 0, the same on both copies, which share the grid's layout.
#pragma once

#include "guard_cell_plan.hpp"

#include <korch/backend/spaces.hpp>
#include <korch/transfer_bytes.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace korch {

class GridResidency;

namespace detail {

class ResidentGuardFill {
 public:
  // `host_base`: the grid's host copy (block 0, variable 0); `var_stride`: doubles from one variable
  // of a block to the next (throws korch::Error when the device copy's differs).
  ResidentGuardFill(const GuardCellPlan& plan, GridResidency& residency, double* host_base, std::ptrdiff_t var_stride);

  // Begins a fill of variables [first, first + count): decides and claims each block's side, then
  // fills every guard cell of device blocks from this rank's blocks, and the guard cells of host
  // blocks whose sources are on the device. The guard cells of a host block from host blocks are
  // left to the exchange (fill_local); returns when the device's part is done.
  void start(int first, int count);
  bool on_device(int block) const noexcept { return sides_[static_cast<std::size_t>(block)] != 0; }
  // After the exchange packed message `peer` from the host copy: the cells whose blocks are on the
  // device replace what the host copy held for them.
  void pack(std::size_t peer, double* message);
  // After the exchange unpacked message `peer` into the host copy: the cells of device blocks go to
  // the device copy.
  void unpack(std::size_t peer, const double* message);
  // Every copy the fills made between host and device: variables claimed and cells staged.
  const TransferBytes& moved() const noexcept { return moved_; }

 private:
  using Offsets = Kokkos::View<std::int64_t*, DeviceMemSpace>;
  using Buffer = Kokkos::View<double*, DeviceMemSpace>;
  using PinnedBuffer = Kokkos::View<double*, PinnedHostMemSpace>;
  // Cells copied between the device copy (offsets `device`) and a host array (offsets `host`), in
  // the same order, through one buffer on each side.
  struct Staging {
    Offsets device;
    std::vector<std::int64_t> host;
    mutable Buffer device_buffer;
    mutable PinnedBuffer host_buffer;  // pinned, so that the copies need no bounce buffer
  };
  // A host array's layout: the grid's host copy, or a message (variable-major, one cell per entry).
  struct HostArray {
    double* base;
    std::int64_t var_stride;
    int first;  // the fill's first variable in this array
  };
  struct SidedCopies {
    Offsets device_dst, device_src;   // both blocks on the device
    Staging to_host, to_device;       // source on the other side than the destination
    std::vector<Staging> send, recv;  // per peer: the entries whose block is on the device
  };

  void make_copies();
  std::uint64_t device_to_host(const Staging& s, const HostArray& to) const;
  std::uint64_t host_to_device(const Staging& s, const HostArray& from) const;
  Staging staging(const char* label, const std::vector<std::int64_t>& device,
                  const std::vector<std::int64_t>& host) const;

  const GuardCellPlan& plan_;
  GridResidency& residency_;
  double* host_base_;
  double* device_base_;
  std::int64_t var_stride_;
  std::vector<std::int64_t> block_offset_;   // per block: its first double from block 0's
  std::vector<unsigned char> sides_;         // per block: 1 on the device (the last fill's)
  std::vector<unsigned char> copies_sides_;  // the sides copies_ was made for
  SidedCopies copies_;
  int first_ = 0, count_ = 0;
  TransferBytes moved_;
};

}  // namespace detail
}  // namespace korch
