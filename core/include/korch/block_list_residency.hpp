// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// BlockListResidency: korch's host copies of the blocks of a BlockList whose arrays live in device
// memory (BlockArray::on_device; docs/residency.md, "A code's own device arrays"). The code's device
// arrays are the primary copy: every (block, variable) starts valid on the device alone, packets
// of blocks read and write the arrays where they are, and a host copy of a block (the same strides
// and span as its device array) is allocated the first time the host needs the block.
//
// A variable whose cells are one contiguous range moves in one copy; any other layout is gathered
// into a compact staging buffer on its side, copied, and scattered on the other side, so the cells
// of variables the list does not see (a subview of a larger array) are never written.
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/backend/strided_copy.hpp>
#include <korch/device_residency.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace korch {

class BlockListResidency : public DeviceResidency {
 public:
  // One block's device array: the address of (var 0, i 0, j 0, k 0), extents and strides in
  // doubles along (var, i, j, k).
  struct Array {
    double* data = nullptr;
    std::array<std::int64_t, 4> extent{0, 0, 0, 0};
    std::array<std::int64_t, 4> stride{0, 0, 0, 0};
  };

  BlockListResidency(std::string list_name, int n_vars);
  // Appends a block (valid on the device alone). Not while a cycle or a copy runs.
  void add(const Array& array);

  DeviceBlockLayout device_layout(int block) const override;
  // The block's host copy (allocated on first use; its pages go back to the system while unused,
  // DeviceResidency), with its device array's strides. Does not make it valid: make_host_valid()
  // does.
  double* host_block(int block);

 protected:
  std::uint64_t copy_var_to_device(int block, int var, const DeviceTaskSpace& instance) override;
  std::uint64_t copy_var_to_host(int block, int var) override;
  std::string kind() const override { return name_; }
  HostSpan host_span(int block) const override;

 private:
  using HostDoubles = Kokkos::View<double*, Kokkos::HostSpace>;
  using DeviceDoubles = Kokkos::View<double*, DeviceMemSpace>;
  std::int64_t span(int block) const;
  // One variable of a block: its first cell in the device array and in the host copy, and its box.
  struct VarCells {
    double* device;
    double* host;
    StridedBox box;
  };
  VarCells var_cells(int block, int var);

  std::string name_;
  std::vector<Array> arrays_;
  mutable std::mutex mirrors_mutex_;
  std::vector<HostDoubles> mirrors_;
  DeviceDoubles device_staging_;  // one variable of the largest block, compact
  HostDoubles host_staging_;
};

}  // namespace korch
