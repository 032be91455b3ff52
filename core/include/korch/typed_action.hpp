// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// TypedAction: builds an ActionRoutine from routines written for the item types themselves, so that
// no user code casts a DataItem. A routine is given for tiles, for blocks, for each entry of a data
// packet, or once for all three as a box routine that sees every item as a BoxView (box_view.hpp):
//
//   korch::ActionRoutine r = korch::TypedAction("scale")
//       .on_box([](const korch::ActionContext& ctx, const auto& box) { scale_box(box); })
//       .routine();
//
// korch picks the routine by the item's type: on_tile / on_block / on_packet_entry when given for
// that type, else the box routine (a GridBoxView for a korch::Grid's tiles and blocks, a
// StridedBoxView for those of any other source, a PacketBoxView for packet entries). A packet is
// handed over entry by entry, and the thread's device instance is fenced after its last entry (also
// when an entry's routine threw), so the packet's results are complete when its next owner takes it
// (a tile's or block's kernels run on the host instance, Kokkos::Serial or one-thread OpenMP, which
// finishes them before their dispatch returns). An item no routine covers, or an item without the
// guard cells an action reads (reads_guard_cells), fails the call with a korch::Error naming the
// action, the item and the fix. Design and rules (CUDA's for lambdas included): docs/typed-actions.md.
#pragma once

#include <korch/action_context.hpp>
#include <korch/action_routine.hpp>
#include <korch/block.hpp>
#include <korch/box_view.hpp>
#include <korch/packet_entry.hpp>
#include <korch/packet_pack.hpp>
#include <korch/tile.hpp>

#include <functional>
#include <string>
#include <utility>

namespace korch {

class TypedAction {
 public:
  using TileRoutine = std::function<void(const ActionContext&, Tile&)>;
  using BlockRoutine = std::function<void(const ActionContext&, Block&)>;
  using PacketEntryRoutine = std::function<void(const ActionContext&, const PacketEntry&)>;
  using GridBoxRoutine = std::function<void(const ActionContext&, const GridBoxView&)>;
  using StridedBoxRoutine = std::function<void(const ActionContext&, const StridedBoxView&)>;
  using PacketBoxRoutine = std::function<void(const ActionContext&, const PacketBoxView&)>;
  using PacketRoutine = std::function<void(const ActionContext&, const PacketPack&)>;

  // `name` is the action's name: errors and traces use it, and a Bundle finds the action by it.
  explicit TypedAction(std::string name) : name_(std::move(name)) {}

  // Each step returns the action itself: an rvalue on a temporary, so that a chain that ends in a
  // copy moves the routines instead.

  TypedAction&& on_tile(TileRoutine routine) && { return std::move(on_tile(std::move(routine))); }
  TypedAction& on_tile(TileRoutine routine) & {
    tile_ = std::move(routine);
    return *this;
  }
  TypedAction&& on_block(BlockRoutine routine) && { return std::move(on_block(std::move(routine))); }
  TypedAction& on_block(BlockRoutine routine) & {
    block_ = std::move(routine);
    return *this;
  }
  TypedAction&& on_packet_entry(PacketEntryRoutine routine) && {
    return std::move(on_packet_entry(std::move(routine)));
  }
  TypedAction& on_packet_entry(PacketEntryRoutine routine) & {
    packet_entry_ = std::move(routine);
    return *this;
  }
  // A routine for a whole data packet at once (packet_pack.hpp): one kernel over every entry,
  // instead of on_packet_entry's one call per entry. It takes precedence for packets.
  TypedAction&& on_packet(PacketRoutine routine) && { return std::move(on_packet(std::move(routine))); }
  TypedAction& on_packet(PacketRoutine routine) & {
    packet_ = std::move(routine);
    return *this;
  }
  // One routine for every item: `routine(context, box)` must compile for a GridBoxView, a
  // StridedBoxView and a PacketBoxView (a generic lambda, or a functor with the three overloads).
  template <class Routine>
  TypedAction&& on_box(Routine routine) && {
    return std::move(on_box(std::move(routine)));
  }
  template <class Routine>
  TypedAction& on_box(Routine routine) & {
    grid_box_ = routine;
    strided_box_ = routine;
    packet_box_ = std::move(routine);
    return *this;
  }
  // A box routine for one kind only (the other kinds then need their own routines or fail).
  TypedAction&& on_grid_box(GridBoxRoutine routine) && { return std::move(on_grid_box(std::move(routine))); }
  TypedAction& on_grid_box(GridBoxRoutine routine) & {
    grid_box_ = std::move(routine);
    return *this;
  }
  TypedAction&& on_strided_box(StridedBoxRoutine routine) && { return std::move(on_strided_box(std::move(routine))); }
  TypedAction& on_strided_box(StridedBoxRoutine routine) & {
    strided_box_ = std::move(routine);
    return *this;
  }
  TypedAction&& on_packet_box(PacketBoxRoutine routine) && { return std::move(on_packet_box(std::move(routine))); }
  TypedAction& on_packet_box(PacketBoxRoutine routine) & {
    packet_box_ = std::move(routine);
    return *this;
  }
  // The routines read guard cells around the box (a stencil). With a width: `width` cells on each
  // side in every direction the block extends in (more than one cell thick, or with guard cells),
  // checked against what the item holds: a block of a source declared with fewer guard cells, or
  // an entry of a packet of tiles, fails with an error naming the block, the direction and the fix
  // instead of reading past the data. Without a width: all the guard cells the source declares.
  // Throws korch::Error when width < 1.
  TypedAction&& reads_guard_cells() && { return std::move(reads_guard_cells()); }
  TypedAction& reads_guard_cells() & {
    guard_width_read_ = all_guard_cells;
    return *this;
  }
  TypedAction&& reads_guard_cells(int width) && { return std::move(reads_guard_cells(width)); }
  TypedAction& reads_guard_cells(int width) &;

  // The ActionRoutine that dispatches to the routines given. Throws korch::Error when the name is
  // empty or no routine was given.
  ActionRoutine routine() const;
  operator ActionRoutine() const { return routine(); }  // NOLINT: a TypedAction is used where a routine is

 private:
  std::string name_;
  TileRoutine tile_;
  BlockRoutine block_;
  PacketEntryRoutine packet_entry_;
  GridBoxRoutine grid_box_;
  StridedBoxRoutine strided_box_;
  PacketBoxRoutine packet_box_;
  PacketRoutine packet_;
  static constexpr int no_guard_cells = -1;
  static constexpr int all_guard_cells = 0;
  int guard_width_read_ = no_guard_cells;  // or a width >= 1
};

}  // namespace korch
