// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A minimal grid substrate for the orchestration runtime's tests and apps, and one DataSource:
// a uniform 3-D grid of blocks, each with nxb x nyb x nzb interior cells and `guard` guard cells on
// every side (of the first guard_dims directions), n_vars cell-centred variables, one refinement level (its index kept
// in the metadata). Tiles are sub-boxes of a block's interior (tile size configurable; the whole block allowed).
//
// Storage: one host View (block, var, i, j, k), LayoutRight, so each block (all variables, guard
// cells included) is one contiguous range of doubles. Indices i, j, k are block-local and count
// guard cells: the interior is [guard, guard + nxb) (in z [0, nzb) when guard_dims < 3).
#pragma once

#include <korch/block_meta.hpp>
#include <korch/data_source.hpp>
#include <korch/transfer_bytes.hpp>

#include <Kokkos_Core.hpp>

#include <memory>

#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace korch {

class GridResidency;

struct GridSpec {
  std::array<int, 3> block_cells{16, 16, 16};  // interior cells per block
  std::array<int, 3> blocks{2, 2, 2};          // blocks per direction
  int guard = 1;                               // guard cells per side
  // Directions that have guard cells: the first guard_dims of x, y, z (1..3). A 2-D grid (one cell
  // per block in z) sets 2, so that its blocks store no z guard planes (a 2-guard-cell 2-D block
  // would otherwise store, pack and move 5 planes for its 1 interior plane).
  int guard_dims = 3;
  int n_vars = 1;  // cell-centred variables
  // Face-centred variables (docs/data-sources.md, "Face variables"): kept on the faces across each
  // axis the blocks extend along, in host memory (a resident grid's packets carry them).
  int n_face_vars = 0;
  int level = 0;  // refinement level index (metadata)
  std::array<double, 3> domain_lo{0.0, 0.0, 0.0};
  std::array<double, 3> domain_hi{1.0, 1.0, 1.0};
  std::array<int, 3> tile_cells{0, 0, 0};  // tile size; 0 in a direction: the whole block
  // The global ids (x fastest) of the blocks this grid stores, ascending: a rank's share of the
  // whole grid (Decomposition::blocks_of). Empty: every block. The grid numbers the blocks it
  // stores 0, 1, ... in this order (BlockMeta::id) and keeps their global ids (BlockMeta::global_id).
  std::vector<int> owned_blocks;
  // Keep a device copy of the blocks between cycles (docs/residency.md): packets of blocks then
  // point into it and move only the variables whose device copy is stale; the host accessors below
  // bring stale blocks back first. False: every packet copies its blocks each way, each cycle.
  bool resident = false;
};

// Checks a spec's sizes in 64-bit arithmetic against Grid::max_blocks, Grid::max_cells_per_direction
// (global and stored per block) and, when memory_limit > 0, the storage's bytes against it; throws
// korch::Error naming the sizes and the limit. Returns the storage's size in bytes. Expects the
// other fields to be valid (positive counts, guard >= 0).
std::size_t check_grid_size(const GridSpec& spec, std::uint64_t memory_limit);
// This machine's physical memory in bytes (0 when unknown).
std::uint64_t physical_memory_bytes() noexcept;

class Grid : public DataSource {
 public:
  using HostData = Kokkos::View<double*****, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using ReadOnlyHostData = Kokkos::View<const double*****, Kokkos::LayoutRight, Kokkos::HostSpace>;
  using BlockData =
      Kokkos::View<double****, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  // Limits of a spec: block ids and block-local and global cell indices are int.
  static constexpr std::int64_t max_blocks = INT_MAX;
  static constexpr std::int64_t max_cells_per_direction = INT_MAX;

  // Throws korch::Error naming the field when the spec is not usable, and naming the sizes and the
  // limit when it exceeds one (check_grid_size, with this machine's physical memory).
  explicit Grid(GridSpec spec);

  const GridSpec& spec() const noexcept { return spec_; }
  std::string source_name() const override { return "grid"; }
  int n_blocks() const noexcept override { return static_cast<int>(meta_.size()); }
  int n_vars() const noexcept override { return spec_.n_vars; }
  const BlockMeta& block(int id) const override;
  // Every block has the same tiles (tile_boxes()).
  const std::vector<Box>& tiles_of(int id) const override;
  BlockView block_view(int id) const override;
  int n_face_vars() const noexcept override { return spec_.n_face_vars; }
  // The block's faces across `axis`: (var, i, j, k), LayoutRight over face_box(stored, axis).
  BlockView face_view(int id, int axis) const override;
  const std::vector<BlockMeta>& blocks() const noexcept { return meta_; }

  // Tiles of every block (identical tiling for every block).
  int tiles_per_block() const noexcept { return static_cast<int>(tile_boxes_.size()); }
  const Box& tile_box(int tile) const { return tile_boxes_.at(static_cast<std::size_t>(tile)); }
  const std::vector<Box>& tile_boxes() const noexcept { return tile_boxes_; }

  const Grid* grid_or_null() const noexcept override { return this; }

  // Host accessors. On a resident grid each first brings the blocks it covers back from the device
  // where the host copy is stale, and marks their device copies stale, as the caller may write them
  // (docs/residency.md). Take them again after a cycle: what they returned before may be stale.
  //
  // The whole grid's managed View. Copying it changes a reference count, which a Kokkos built with
  // the Serial backend alone changes without atomics: action routines on team threads take
  // block_data() or block_pointer() instead (unmanaged, no count).
  HostData data() const;
  // The same for reading only (outputs, diagnostics): a resident grid's blocks come back where the
  // host copy is stale, and their device copies stay valid, so the next device cycle moves nothing.
  ReadOnlyHostData read_data() const;
  // One block's storage (var, i, j, k), guard cells included.
  BlockData block_data(int id) const;
  double* block_pointer(int id) const;
  std::size_t doubles_per_block() const noexcept { return doubles_per_block_; }
  std::array<int, 3> stored_extent() const noexcept;
  // Guard cells per side in each direction: `guard` in the first guard_dims directions, else 0.
  std::array<int, 3> guard_width() const noexcept;

  // The device copy and its validity flags; nullptr unless the spec is resident.
  GridResidency* residency() const noexcept { return residency_.get(); }
  DeviceResidency* device_residency() const noexcept override;
  // Everything the residency copied between the host and the device copy (zero when not resident).
  TransferBytes residency_transfers() const;

  // Fill every variable of every cell (guard cells included) with f(block, var, i, j, k).
  template <class F>
  void fill(F&& f) {
    auto h = data();
    for (int b = 0; b < n_blocks(); ++b)
      for (int v = 0; v < spec_.n_vars; ++v)
        for (int i = 0; i < static_cast<int>(h.extent(2)); ++i)
          for (int j = 0; j < static_cast<int>(h.extent(3)); ++j)
            for (int k = 0; k < static_cast<int>(h.extent(4)); ++k) h(b, v, i, j, k) = f(b, v, i, j, k);
  }
  // Largest absolute difference between the interiors of two grids of the same spec (it only reads:
  // resident blocks come back to the host, their device copies stay valid).
  double max_interior_difference(const Grid& other) const;
  // A copy of this grid (data included; a resident grid's copy starts valid on the host alone).
  Grid clone() const;

 private:
  GridSpec spec_;
  std::vector<BlockMeta> meta_;
  std::vector<Box> tile_boxes_;
  void allocate_faces(std::size_t n_blocks, std::size_t bytes);
  HostData data_;
  std::array<HostData, 3> faces_;  // per axis (block, var, i, j, k); empty without faces across it
  std::size_t doubles_per_block_ = 0;
  // Shared by copies of the grid, which share its storage too.
  std::shared_ptr<GridResidency> residency_;
};

// `source` as a Grid; throws korch::Error naming the source when it is another kind of source.
const Grid& as_grid(const DataSource& source);
Grid& as_grid(DataSource& source);

}  // namespace korch
