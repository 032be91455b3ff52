// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal: the guard-cell fill of a source with device copies (a resident korch::Grid, a
// BlockList of device arrays; docs/residency.md, "Guard cells"). Each block is filled on the side
// that holds its variables (DeviceResidency::sides): copies between blocks on the device run as
// one kernel over every such copy and variable; copies between a device block and a host block,
// and messages to or from other ranks' blocks on the device, go through a staging buffer, so only
// the guard cells' sources cross between host and device, never whole blocks. Copies between host
// blocks stay with the exchange's per-block host loop.
//
// The copy lists for one assignment of blocks to sides are made once and kept while the sides
// stay (a split configuration keeps its blocks where they were computed). A cell is a block and an
// offset in the block's own strides, which its host copy shares with its device copy.
#pragma once

#include "guard_cell_plan.hpp"

#include <korch/backend/spaces.hpp>
#include <korch/transfer_bytes.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace korch {

class DeviceResidency;

namespace detail {

class ResidentGuardFill {
 public:
  // Per block: its host copy (variable 0) and the doubles from one variable to the next, which
  // must be the device copy's (throws korch::Error otherwise).
  ResidentGuardFill(const GuardCellPlan& plan, DeviceResidency& residency, const std::vector<double*>& host_base,
                    const std::vector<std::ptrdiff_t>& var_stride);

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

  // Messages whose cells all lie in device blocks are sent from and received into device memory
  // (GPU-aware MPI) when `direct`; otherwise every message is staged through the host.
  void set_direct_messages(bool direct) noexcept { direct_messages_ = direct; }
  // After start(): the device buffer that holds message `peer`'s cells, gathered and ready to
  // send, or nullptr when that message is staged (then pack() after the exchange packed it).
  double* send_buffer_on_device(std::size_t peer);
  // After start(): the device buffer to receive message `peer` into, or nullptr when staged.
  double* receive_buffer_on_device(std::size_t peer);
  // Once message `peer` arrived in receive_buffer_on_device(): its cells into the device blocks.
  // False when that message is staged (then unpack()).
  bool unpack_on_device(std::size_t peer);

 private:
  using Blocks = Kokkos::View<int*, DeviceMemSpace>;
  using Offsets = Kokkos::View<std::int64_t*, DeviceMemSpace>;
  using Buffer = Kokkos::View<double*, DeviceMemSpace>;
  using PinnedBuffer = Kokkos::View<double*, PinnedHostMemSpace>;
  // Cells of device blocks, on the device.
  struct DeviceCells {
    Blocks block;
    Offsets offset;
  };
  // Cells copied between device blocks (`device`) and host cells (`host`: blocks and offsets, or
  // message positions with block -1), in the same order, through one buffer on each side.
  struct Staging {
    DeviceCells device;
    std::vector<CellCopy> host;  // dst_block and dst used
    mutable Buffer device_buffer;
    mutable PinnedBuffer host_buffer;  // pinned, so that the copies need no bounce buffer
  };
  struct SidedCopies {
    DeviceCells device_dst, device_src;  // both blocks on the device
    Staging to_host, to_device;          // source on the other side than the destination
    std::vector<Staging> send, recv;     // per peer: the entries whose block is on the device
  };
  void make_copies();
  void gather_on_device(const Staging& s) const;
  void scatter_on_device(const Staging& s) const;
  bool whole_message_on_device(const Staging& s, std::size_t message_cells) const;
  // Between the staging's device cells and its host cells (message: where positions point, with
  // message_cells cells per variable; nullptr for blocks' host copies).
  std::uint64_t device_to_host(const Staging& s, double* message, std::int64_t message_cells) const;
  std::uint64_t host_to_device(const Staging& s, const double* message, std::int64_t message_cells) const;
  double& host_cell(const CellCopy& cell, int v, double* message, std::int64_t n) const;
  DeviceCells upload(const char* label, const std::vector<CellCopy>& cells) const;

  const GuardCellPlan& plan_;
  DeviceResidency& residency_;
  std::vector<double*> host_base_;
  std::vector<std::ptrdiff_t> var_stride_;
  Kokkos::View<std::uintptr_t*, DeviceMemSpace> device_base_;  // per block: its device copy (variable 0)
  Offsets device_var_stride_;                                  // per block
  std::vector<unsigned char> sides_;                           // per block: 1 on the device (the last fill's)
  std::vector<unsigned char> copies_sides_;                    // the sides copies_ was made for
  SidedCopies copies_;
  int first_ = 0, count_ = 0;
  bool direct_messages_ = false;
  TransferBytes moved_;
};

}  // namespace detail
}  // namespace korch
