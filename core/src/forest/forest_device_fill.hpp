// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal: the guard-cell fill across levels of a code's leaves in device memory, run on the
// device (docs/adaptive-mesh.md, "Leaves in device memory"). A ForestGuardFill over the device
// arrays works out each leaf's plan on the host (a plan holds addresses, it never reads a cell);
// the plans go to the device as one list of guard cells, each the value of one leaf cell, the mean
// of finer cells, or a limited prolongation of a coarser cell, and one kernel fills them, for every
// leaf at once or for one leaf. The arithmetic is the host replay's, in its order, so both give the
// same bits. The copies of other ranks' leaves live in device buffers in korch::Grid's layout; a
// leaf that travels is gathered on the device and crosses to the host once, in that layout.
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/block_forest.hpp>
#include <korch/block_list.hpp>
#include <korch/forest_guard_fill.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace korch::detail {

class ForestDeviceFill {
 public:
  // One guard cell: the value of term `term` (slopes 0) or its limited prolongation along `slopes`
  // axes (ForestGuardFill::LeafPlan), written to `cell` + var * var_stride.
  struct GuardCell {
    double* cell;
    std::int64_t var_stride;
    int term, slopes;
    unsigned above;
  };
  struct Term {
    int first, count;  // into the sources
  };
  struct Source {
    const double* cell;
    std::int64_t var_stride;
  };

  // `own`: this rank's leaves and their device arrays (block id order); `ghosts`: the other ranks'
  // leaves this rank's fills read, each given a device buffer. The forest must outlive this object.
  ForestDeviceFill(const BlockForest& forest, std::array<int, 3> cells, std::array<int, 3> guard, int n_vars,
                   const std::vector<BlockKey>& own, const std::vector<BlockArray>& own_arrays,
                   const std::vector<BlockKey>& ghosts);
  // Whether every guard cell of every own leaf has a plan (false: some need the cell-by-cell host
  // path, e.g. a custom boundary, so the host fills them all).
  bool complete() const noexcept { return complete_; }

  // Variables [first, end) of every own leaf's guard cells, then of one leaf (block id); fenced.
  // Calls from several threads take turns.
  void fill(int first, int end) const;
  void fill_leaf(int block, int first, int end) const;
  // The box of variables first_var .. first_var + n_vars - 1 of own leaf `block` into `out` (host
  // memory) as ForestGhosts::Pack orders it (variable by variable, k fastest); the box of a copy of
  // another rank's leaf from `in` (host memory, the same order) into its device buffer.
  void pack(int block, const ForestGuardFill::Box& box, int first_var, int n_vars, double* out) const;
  void unpack(const BlockKey& ghost, const ForestGuardFill::Box& box, int first_var, int n_vars,
              const double* in) const;

 private:
  using Buffer = Kokkos::View<double*, DeviceMemSpace>;
  void flatten(const std::vector<BlockKey>& own);
  void run(std::int64_t begin, std::int64_t end, int first, int last) const;

  ForestGuardFill plans_;  // over the device arrays: its plans hold device addresses
  int n_vars_;
  std::vector<BlockArray> own_arrays_;
  std::array<std::int64_t, 3> ghost_stride_;  // along i, j, k in a ghost's buffer (Grid's layout)
  std::unordered_map<BlockKey, Buffer, BlockKeyHash> ghosts_;
  std::vector<std::int64_t> leaf_begin_;  // per block id and one more: its first guard cell
  Kokkos::View<GuardCell*, DeviceMemSpace> guard_cells_;
  Kokkos::View<Term*, DeviceMemSpace> terms_;
  Kokkos::View<Source*, DeviceMemSpace> sources_;
  Buffer staging_;  // one leaf, compact
  using HostValues = Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  using ConstHostValues = Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  DeviceTaskSpace instance_;
  mutable std::mutex launching_;
  bool complete_ = true;
};

}  // namespace korch::detail
