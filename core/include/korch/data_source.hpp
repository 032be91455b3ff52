// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// DataSource: where the blocks of one execution cycle come from (docs/data-sources.md).
//
// The runtime never owns a physics code's data: a source tells it how many blocks there are, each
// block's metadata (level, boxes, coordinates), how its interior is cut into tiles, and where its
// cells live. korch::Grid is one source (a uniform grid that korch allocates); korch::BlockList is
// another, whose blocks point into arrays that the physics code owns, in the code's own layout and
// of any size. A code may also derive its own source from this class.
//
// A block's cells are seen through a BlockView indexed (var, i, j, k) with block-local indices that
// count guard cells (the same indices as BlockMeta::interior and BlockMeta::stored); its strides say
// how the code laid the array out, so no copy is made to present it.
#pragma once

#include <korch/block_meta.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace korch {

// One block's cells in its owner's layout: (var, i, j, k), block-local indices, any strides.
using BlockView =
    Kokkos::View<double****, Kokkos::LayoutStride, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

class Grid;
class DeviceResidency;

class DataSource {
 public:
  DataSource() noexcept;
  // A copy is a different source: its items must not be mistaken for the original's.
  DataSource(const DataSource&) noexcept;
  DataSource& operator=(const DataSource&) noexcept;
  virtual ~DataSource() = default;

  // Names the source in error messages ("grid", "block list 'heat'").
  virtual std::string source_name() const = 0;
  virtual int n_blocks() const = 0;
  virtual int n_vars() const = 0;
  // Throws korch::Error naming the source when the block does not exist.
  virtual const BlockMeta& block(int id) const = 0;
  // The tiles of one block's interior (block-local boxes, at least one).
  virtual const std::vector<Box>& tiles_of(int id) const = 0;
  // The block's cells, guard cells included: extents (n_vars, stored extents).
  virtual BlockView block_view(int id) const = 0;
  // Face-centred variables (docs/data-sources.md, "Face variables"): how many each block holds on
  // its faces across every axis it extends along (has_faces_across), 0 for none; and one block's
  // faces across `axis` as a BlockView (var, i, j, k) over face_box(stored, axis), in block-local
  // indices (face i is the low face of cell i). face_view throws korch::Error naming the source,
  // the block and the axis when the block has no faces there.
  virtual int n_face_vars() const { return 0; }
  virtual BlockView face_view(int id, int axis) const;
  // False for a block that a finer block covers (a source with levels); LeafBlocks skips it.
  virtual bool is_leaf(int id) const;
  // This source as a korch::Grid, or nullptr for any other kind (what as_grid() and the routines'
  // dispatch ask, without a dynamic_cast).
  virtual const Grid* grid_or_null() const noexcept { return nullptr; }
  // The device copies of the source's blocks and their validity (docs/residency.md), or nullptr
  // for a source whose blocks live on the host alone.
  virtual DeviceResidency* device_residency() const noexcept { return nullptr; }
  // The runtime is done with the blocks for now (after a cycle, or a guard-cell fill between
  // cycles): a source whose primary copy is in device memory writes back what the host changed.
  virtual void release_host_copies() const {}

  // Changes whenever the blocks or their tiles change (and differs between any two sources alive
  // at once): caches of a source's items compare it to know they are still valid.
  std::uint64_t layout_stamp() const noexcept { return stamp_; }

 protected:
  // A source whose blocks change calls this after every change.
  void new_layout() noexcept;

 private:
  std::uint64_t stamp_;
};

// Questions about a whole source, for checks made before a cycle.
// The fewest guard cells any block has on a side, over the directions that block extends in (more
// than one cell thick, or with guard cells); 0 when one has none there. A source without blocks: 0.
int narrowest_guard(const DataSource& source);
// The levels of the source's blocks, ascending, each once.
std::vector<int> levels_of(const DataSource& source);
// The block whose faces across `axis` face_view() is asked for, after checking that the source has
// face variables and the block faces there; throws korch::Error naming what is missing.
const BlockMeta& block_with_faces(const DataSource& source, int id, int axis);
// Tiles per block, averaged over the blocks (0 for a source without blocks).
double mean_tiles_per_block(const DataSource& source);

}  // namespace korch
