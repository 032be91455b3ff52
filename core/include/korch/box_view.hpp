// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// BoxView: the one shape in which a typed action routine (typed_action.hpp) may see any item it is
// given: a box of cells to update, the cells its variables hold around it, the variables as 3-D
// Kokkos Views indexed like the box, and the execution-space instance to launch kernels on.
//
// Three kinds, told apart at compile time so that a routine written once (a generic lambda or a
// functor with a template call operator) compiles for all:
//   GridBoxView    a tile or a block of a korch::Grid, in the grid's host memory (LayoutRight),
//                  indexed block-local; kernels go to the thread's host instance (HostTaskSpace)
//   StridedBoxView a tile or a block of any other source (a physics code's BlockList, a DataSource
//                  of its own), in the code's host memory and layout (LayoutStride), block-local
//   PacketBoxView  an entry of a data packet of any source, in device memory, indexed entry-local
//                  (0 is the first cell the packet stores of the entry); kernels go to the thread's
//                  device instance
// On host-only builds the grid and packet kinds' Views have the same type. Design:
// docs/typed-actions.md.
#pragma once

#include <korch/action_context.hpp>
#include <korch/backend/spaces.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/error.hpp>
#include <korch/data_item.hpp>
#include <korch/data_packet.hpp>
#include <korch/grid.hpp>
#include <korch/packet_entry.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <type_traits>

namespace korch {

// One variable of one block in the grid's host memory, indexed block-local (guard cells included).
using HostCellVar =
    Kokkos::View<double***, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
// One variable of one block of another source, in its owner's layout, indexed block-local.
using StridedCellVar =
    Kokkos::View<double***, Kokkos::LayoutStride, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

// Where a box view's cells live.
enum class BoxSource { grid, strided, packet };

template <BoxSource Source>
class BoxView {
 public:
  static constexpr BoxSource kind = Source;
  static constexpr bool in_packet = Source == BoxSource::packet;
  using execution_space = std::conditional_t<in_packet, DeviceTaskSpace, HostTaskSpace>;
  using var_type = std::conditional_t<in_packet, DataPacket::DeviceVar,
                                      std::conditional_t<Source == BoxSource::grid, HostCellVar, StridedCellVar>>;
  using face_type = std::conditional_t<in_packet, DataPacket::DeviceVar, StridedCellVar>;

  // A tile's box or a block's interior (grid and strided views); `source` is a korch::Grid for a
  // grid view.
  BoxView(const ActionContext& context, DataItem& item, const DataSource& source, int block, int tile, const Box& box)
      : BoxView(context, item, source, source.block(block), tile, box) {}
  BoxView(const ActionContext& context, DataItem& item, const DataSource& source, const BlockMeta& block, int tile,
          const Box& box)
      : context_(&context),
        item_(&item),
        source_(&source),
        block_(block.id),
        tile_(tile),
        box_(box),
        stored_(block.stored),
        interior_(block.interior),
        level_(block.level),
        delta_(block.delta) {
    static_assert(!in_packet, "a packet view is made from a PacketEntry");
    if constexpr (Source == BoxSource::strided) block_view_ = source.block_view(block.id);
  }
  // A packet entry (packet views).
  BoxView(const ActionContext& context, const PacketEntry& entry)
      : context_(&context),
        item_(&entry.packet()),
        source_(&entry.packet().source()),
        entry_(&entry),
        block_(entry.block_id()),
        tile_(entry.tile_index()),
        box_(entry.interior()),
        stored_(entry.stored()),
        interior_(entry.interior()),
        level_(entry.level()),
        delta_{entry.meta().delta[0], entry.meta().delta[1], entry.meta().delta[2]} {}

  const ActionContext& context() const noexcept { return *context_; }
  // The tile, block or packet the box belongs to.
  DataItem& item() const noexcept { return *item_; }
  // Where the block comes from: a korch::Grid, a physics code's BlockList, ...
  const DataSource& source() const noexcept { return *source_; }
  // The source as a korch::Grid; throws korch::Error naming the source when it is another kind.
  const Grid& grid() const { return as_grid(*source_); }
  // The entry within its packet (packet views only).
  const PacketEntry& entry() const noexcept {
    static_assert(in_packet, "entry(): only a PacketBoxView belongs to a packet");
    return *entry_;
  }

  int block_id() const noexcept { return block_; }
  // The tile's index in its block, or -1 when the box is a whole block's interior.
  int tile_index() const noexcept { return tile_; }
  int level() const noexcept { return level_; }
  const std::array<double, 3>& delta() const noexcept { return delta_; }

  // The cells to update, in the Views' indices; lo() and hi() as int[3] for Kokkos policies.
  const Box& box() const noexcept { return box_; }
  const int* lo() const noexcept { return box_.lo.data(); }
  const int* hi() const noexcept { return box_.hi.data(); }
  // The cells the Views hold, in the same indices (box() plus any guard cells around it).
  const Box& stored() const noexcept { return stored_; }
  // Whether the Views hold at least `width` cells on each side of box() in each of the first
  // `dims` directions (a stencil's guard cells).
  bool holds_guard_cells(int width, int dims) const noexcept {
    for (int d = 0; d < dims; ++d)
      if (box_.lo[d] - stored_.lo[d] < width || stored_.hi[d] - box_.hi[d] < width) return false;
    return true;
  }

  // Variable `var`, indexed like box().
  var_type var(int var) const {
    if constexpr (in_packet) {
      return entry_->var(var);
    } else if constexpr (Source == BoxSource::strided) {
      return Kokkos::subview(block_view_, var, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
    } else {
      // The grid's own cast, not as_grid: a grid view is only ever made from a korch::Grid.
      const auto& grid = static_cast<const Grid&>(*source_);
      const auto e = grid.stored_extent();
      const std::size_t n =
          static_cast<std::size_t>(e[0]) * static_cast<std::size_t>(e[1]) * static_cast<std::size_t>(e[2]);
      return var_type(grid.block_pointer(block_) + static_cast<std::size_t>(var) * n, e[0], e[1], e[2]);
    }
  }
  // Face variable `var` across `axis` (DataSource::face_view; a packet's face_copy_* lists), indexed
  // like box(): face i is the low face of cell i, so the faces bounding box() are faces(axis).
  // Throws korch::Error naming the face variable or axis the item does not carry.
  face_type face(int axis, int var) const {
    if constexpr (in_packet) {
      return entry_->face(axis, var);
    } else {
      const BlockView faces = source_->face_view(block_, axis);
      if (var < 0 || var >= static_cast<int>(faces.extent(0)))
        throw Error::format("the {}: face variable {} asked of block {}: it has face variables 0..{}",
                            source_->source_name(), var, block_, faces.extent(0) - 1);
      return Kokkos::subview(faces, var, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
    }
  }
  Box faces(int axis) const noexcept { return face_box(box_, axis); }
  // The faces this box writes without racing its neighbours: a tile of a host block shares its
  // high face with the next tile, which other threads may be writing, so a tile owns its high face
  // only at the block interior's high edge; a block and a packet entry (its own copy) own all of
  // faces(axis).
  Box owned_faces(int axis) const noexcept {
    Box owned = faces(axis);
    if (box_.hi[axis] < interior_.hi[axis]) owned.hi[axis] -= 1;
    return owned;
  }
  // The thread's own instance for this box's memory: launch the box's kernels on it.
  const execution_space& space() const noexcept {
    if constexpr (in_packet)
      return context_->device_space();
    else
      return context_->host_space();
  }

 private:
  const ActionContext* context_;
  DataItem* item_;
  const DataSource* source_;
  const PacketEntry* entry_ = nullptr;
  struct NoBlockView {};
  std::conditional_t<Source == BoxSource::strided, BlockView, NoBlockView> block_view_;  // strided: the whole block
  int block_;
  int tile_;
  Box box_;
  Box stored_;
  Box interior_;  // the block's interior (host views), the entry's (packet views)
  int level_;
  std::array<double, 3> delta_;
};

using GridBoxView = BoxView<BoxSource::grid>;
using StridedBoxView = BoxView<BoxSource::strided>;
using PacketBoxView = BoxView<BoxSource::packet>;

}  // namespace korch
