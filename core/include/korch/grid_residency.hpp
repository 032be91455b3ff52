// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// GridResidency: the device copy of a resident korch::Grid (GridSpec::resident) and, per (block,
// variable), which side holds a valid copy (DeviceResidency, docs/residency.md). Both copies have
// the grid's layout (block, var, i, j, k), so one variable of one block is one contiguous range on
// either side and every copy moves whole (block, variable) ranges.
//
// Packets of blocks of a resident grid point into the device copy (DataPacket); the grid's host
// accessors bring blocks back to the host (Grid::block_view and the others).
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/device_residency.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace korch {

class GridResidency : public DeviceResidency {
 public:
  using HostData = Kokkos::View<double*****, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using DeviceData = Kokkos::View<double*****, Kokkos::LayoutRight, DeviceMemSpace>;

  // Allocates the device copy of `host` (same extents); every host copy starts valid, every device
  // copy stale.
  explicit GridResidency(const HostData& host);

  // The first double of a block in the device copy (its variables one after the other, each a
  // LayoutRight (i, j, k) array over the block's stored cells).
  double* device_block(int block) const noexcept;
  DeviceBlockLayout device_layout(int block) const override;
  // Doubles from one variable of a block to the next (both copies).
  std::size_t doubles_per_var() const noexcept { return doubles_per_var_; }

 protected:
  std::uint64_t copy_var_to_device(int block, int var, const DeviceTaskSpace& instance) override;
  std::uint64_t copy_var_to_host(int block, int var) override;
  std::string kind() const override { return "resident grid"; }
  HostSpan host_span(int block) const override;

 private:
  double* host_var(int block, int var) const noexcept;
  double* device_var(int block, int var) const noexcept;

  HostData host_;
  DeviceData device_;
  std::size_t doubles_per_var_ = 0;
};

}  // namespace korch
