// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/data_packet.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>
#include <korch/type_name.hpp>
#include <korch/typed_action.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>

namespace korch {

namespace {

// The routines of one action, shared by every copy of its ActionRoutine.
struct TypedRoutines {
  std::string name;
  TypedAction::TileRoutine tile;
  TypedAction::BlockRoutine block;
  TypedAction::PacketEntryRoutine packet_entry;
  TypedAction::GridBoxRoutine grid_box;
  TypedAction::StridedBoxRoutine strided_box;
  TypedAction::PacketBoxRoutine packet_box;
  TypedAction::PacketRoutine packet;
  int guard_width;  // -1: reads none; 0: the source's guard cells; else this many

  // What the action covers, for error messages: "tiles, blocks (box routine)".
  std::string covered() const {
    std::string kinds;
    auto add = [&kinds](bool given, const char* kind) {
      if (!given) return;
      if (!kinds.empty()) kinds += ", ";
      kinds += kind;
    };
    add(static_cast<bool>(tile), "tiles");
    add(static_cast<bool>(block), "blocks");
    add(static_cast<bool>(packet_entry), "packet entries");
    add(static_cast<bool>(grid_box), "a korch::Grid's tiles and blocks (box routine)");
    add(static_cast<bool>(strided_box), "other sources' tiles and blocks (box routine)");
    add(static_cast<bool>(packet_box), "packet entries (box routine)");
    add(static_cast<bool>(packet), "whole packets");
    return kinds;
  }

  [[noreturn]] void uncovered(const DataItem& item, const char* kind, const char* fix) const {
    throw Error::format("action '{}' has routines for {} only, but was given {} ({}): {}", excerpt(name), covered(),
                        item.describe(), kind, fix);
  }

  // Calls the box routine for a tile or a block (`meta`) of `source`: a grid view on a korch::Grid, a
  // strided view on any other source. False when the action has none for that kind.
  bool run_host_box(const ActionContext& ctx, DataItem& item, const DataSource& source, const BlockMeta& meta, int tile,
                    const Box& box) const {
    // No fence after it: the host instance (Kokkos::Serial, or one-thread OpenMP) has finished its
    // kernels when their dispatch returns (a fence per tile cost more than the rest of the call).
    if (source.grid_or_null() != nullptr) {
      if (!grid_box) return false;
      grid_box(ctx, GridBoxView(ctx, item, source, meta, tile, box));
    } else {
      if (!strided_box) return false;
      strided_box(ctx, StridedBoxView(ctx, item, source, meta, tile, box));
    }
    return true;
  }

  void run_tile(const ActionContext& ctx, Tile& t) const {
    const BlockMeta& meta = t.block_meta();
    if (guard_width >= 0) check_guard_cells(t, t.source(), meta, t.box(), meta.stored);
    if (tile) {
      tile(ctx, t);
    } else if (!run_host_box(ctx, t, t.source(), meta, t.tile_index(), t.box())) {
      uncovered(t, "a tile", "add on_tile(...) or on_box(...) to its TypedAction");
    }
  }

  void run_block(const ActionContext& ctx, Block& b) const {
    const BlockMeta& meta = b.meta();
    if (guard_width >= 0) check_guard_cells(b, b.source(), meta, meta.interior, meta.stored);
    if (block) {
      block(ctx, b);
    } else if (!run_host_box(ctx, b, b.source(), meta, -1, meta.interior)) {
      uncovered(b, "a block", "add on_block(...) or on_box(...) to its TypedAction");
    }
  }

  // Throws when `stored` lacks guard cells the action reads around `box` (both in the same
  // indices). The directions checked are those block `meta` of `source` extends in.
  void check_guard_cells(const DataItem& item, const DataSource& source, const BlockMeta& meta, const Box& box,
                         const Box& stored) const {
    static const char* axis[3] = {"x", "y", "z"};
    for (int d = 0; d < 3; ++d) {
      const int declared = meta.interior.lo[d] - meta.stored.lo[d];
      if (meta.stored.extent(d) < 2) continue;  // a flat direction (z in 2-D): no stencil reaches across it
      const int needed = guard_width == 0 ? declared : guard_width;
      const int held = std::min(box.lo[d] - stored.lo[d], stored.hi[d] - box.hi[d]);
      if (held >= needed) continue;
      const auto* packet = dynamic_cast<const DataPacket*>(&item);
      if (packet != nullptr && packet->data_type() == DataType::packet_of_tiles && held < declared) {
        throw Error::format(
            "action '{}' reads guard cells, but {} stores none around its entries (tile entries): "
            "send this action packets of blocks (packet_of_blocks), blocks or tiles instead",
            excerpt(name), item.describe());
      }
      throw Error::format(
          "action '{}' reads {} guard cells in {}, but block {} of the {} has {} there ({}): give the "
          "block at least {} guard cells in {} (BlockShape::guard or GridSpec::guard, with arrays that "
          "hold them), or read fewer",
          excerpt(name), needed, axis[d], meta.id, source.source_name(), declared, item.describe(), needed, axis[d]);
    }
  }

  void run_packet(const ActionContext& ctx, DataPacket& p) const {
    if (!packet && !packet_entry && !packet_box) {
      const char* fix =
          p.data_type() == DataType::packet_of_tiles
              ? "its entries have no Tile form: add on_packet(...), on_packet_entry(...) or on_box(...) to its "
                "TypedAction"
              : "its entries have no Block form: add on_packet(...), on_packet_entry(...) or on_box(...) to its "
                "TypedAction";
      uncovered(p, "a data packet", fix);
    }
    // The entries' kernels run on the device instance: fence it before the packet moves on, also
    // when an entry failed (the packet's buffers go back to their pool then).
    try {
      for (std::size_t e = 0; e < p.size(); ++e) {
        const PacketEntry entry(p, e);
        if (guard_width >= 0)
          check_guard_cells(p, p.source(), p.source().block(entry.block_id()), entry.interior(), entry.stored());
        if (packet) continue;  // checked every entry; the whole packet runs below
        if (packet_entry)
          packet_entry(ctx, entry);
        else
          packet_box(ctx, PacketBoxView(ctx, entry));
      }
      if (packet) packet(ctx, PacketPack(p));
    } catch (...) {
      try {
        ctx.device_space().fence();
      } catch (...) {  // the entry's own error is the one to report
      }
      throw;
    }
    ctx.device_space().fence();
  }

  void operator()(const ActionContext& ctx, DataItem& item) const {
    switch (item.kind()) {
      case DataItem::Kind::tile: run_tile(ctx, static_cast<Tile&>(item)); return;
      case DataItem::Kind::block: run_block(ctx, static_cast<Block&>(item)); return;
      case DataItem::Kind::packet: run_packet(ctx, static_cast<DataPacket&>(item)); return;
      case DataItem::Kind::other: break;
    }
    {
      throw Error::format(
          "action '{}' was given {} (a {}): a TypedAction takes tiles, blocks and data packets; "
          "route this item to a plain ActionRoutine instead",
          excerpt(name), item.describe(), type_name(typeid(item)));
    }
  }
};

}  // namespace

TypedAction& TypedAction::reads_guard_cells(int width) & {
  if (width < 1)
    throw Error::format(
        "TypedAction '{}': reads_guard_cells({}): give the stencil's width, 1 or more (or no width for "
        "all the source's guard cells)",
        excerpt(name_), width);
  guard_width_read_ = width;
  return *this;
}

ActionRoutine TypedAction::routine() const {
  if (name_.empty()) throw Error("TypedAction: the action has no name: name it, errors and bundles need one");
  if (!tile_ && !block_ && !packet_entry_ && !grid_box_ && !strided_box_ && !packet_box_ && !packet_) {
    throw Error::format(
        "TypedAction '{}': no routine was given: add on_tile, on_block, on_packet, on_packet_entry or on_box",
        excerpt(name_));
  }
  auto routines = std::make_shared<const TypedRoutines>(TypedRoutines{
      name_, tile_, block_, packet_entry_, grid_box_, strided_box_, packet_box_, packet_, guard_width_read_});
  return ActionRoutine(name_, [routines](const ActionContext& ctx, DataItem& item) { (*routines)(ctx, item); });
}

}  // namespace korch
