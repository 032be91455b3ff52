#include <korch/data_packet.hpp>
#include <korch/error.hpp>
#include <korch/type_name.hpp>
#include <korch/typed_action.hpp>

#include <fmt/format.h>

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
  TypedAction::PacketBoxRoutine packet_box;
  bool reads_guard_cells;

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
    add(static_cast<bool>(grid_box), "tiles and blocks (box routine)");
    add(static_cast<bool>(packet_box), "packet entries (box routine)");
    return kinds;
  }

  [[noreturn]] void uncovered(const DataItem& item, const char* kind, const char* fix) const {
    throw Error::format("action '{}' has routines for {} only, but was given {} ({}): {}", name, covered(),
                        item.describe(), kind, fix);
  }

  void run_tile(const ActionContext& ctx, Tile& t) const {
    if (tile) {
      tile(ctx, t);
    } else if (grid_box) {
      // No fence after it: the host instance is Kokkos::Serial, whose kernels have finished when
      // their dispatch returns (a fence per tile cost more than the rest of the call).
      grid_box(ctx, GridBoxView(ctx, t, t.grid(), t.block_id(), t.tile_index(), t.box()));
    } else {
      uncovered(t, "a tile", "add on_tile(...) or on_box(...) to its TypedAction");
    }
  }

  void run_block(const ActionContext& ctx, Block& b) const {
    if (block) {
      block(ctx, b);
    } else if (grid_box) {
      grid_box(ctx, GridBoxView(ctx, b, b.grid(), b.block_id(), -1, b.interior()));
    } else {
      uncovered(b, "a block", "add on_block(...) or on_box(...) to its TypedAction");
    }
  }

  void check_guard_cells(const DataPacket& p, const PacketEntry& entry) const {
    const auto width = p.grid().guard_width();
    for (int d = 0; d < 3; ++d) {
      if (entry.interior().lo[d] - entry.stored().lo[d] < width[d] || entry.stored().hi[d] - entry.interior().hi[d] < width[d]) {
        // Only tile entries lack guard cells: a packet of blocks stores them whole.
        throw Error::format("action '{}' reads guard cells, but {} stores none around entry {} (tile {} of block {}): "
                            "send this action packets of blocks (packet_of_blocks), blocks or tiles instead",
                            name, p.describe(), entry.index(), entry.tile_index(), entry.block_id());
      }
    }
  }

  void run_packet(const ActionContext& ctx, DataPacket& p) const {
    if (!packet_entry && !packet_box) {
      const char* fix = p.data_type() == DataType::packet_of_tiles
                            ? "its entries have no Tile form: add on_packet_entry(...) or on_box(...) to its TypedAction"
                            : "its entries have no Block form: add on_packet_entry(...) or on_box(...) to its TypedAction";
      uncovered(p, "a data packet", fix);
    }
    // The entries' kernels run on the device instance: fence it before the packet moves on, also
    // when an entry failed (the packet's buffers go back to their pool then).
    try {
      for (std::size_t e = 0; e < p.size(); ++e) {
        const PacketEntry entry(p, e);
        if (reads_guard_cells) check_guard_cells(p, entry);
        if (packet_entry) packet_entry(ctx, entry);
        else packet_box(ctx, PacketBoxView(ctx, entry));
      }
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
    if (auto* t = dynamic_cast<Tile*>(&item)) {
      run_tile(ctx, *t);
    } else if (auto* b = dynamic_cast<Block*>(&item)) {
      run_block(ctx, *b);
    } else if (auto* p = dynamic_cast<DataPacket*>(&item)) {
      run_packet(ctx, *p);
    } else {
      throw Error::format("action '{}' was given {} (a {}): a TypedAction takes tiles, blocks and data packets; "
                          "route this item to a plain ActionRoutine instead",
                          name, item.describe(), type_name(typeid(item)));
    }
  }
};

}  // namespace

ActionRoutine TypedAction::routine() const {
  if (name_.empty()) throw Error("TypedAction: the action has no name: name it, errors and bundles need one");
  if (!tile_ && !block_ && !packet_entry_ && !grid_box_ && !packet_box_) {
    throw Error::format("TypedAction '{}': no routine was given: add on_tile, on_block, on_packet_entry or on_box",
                        name_);
  }
  auto routines = std::make_shared<const TypedRoutines>(
      TypedRoutines{name_, tile_, block_, packet_entry_, grid_box_, packet_box_, reads_guard_cells_});
  return ActionRoutine(name_, [routines](const ActionContext& ctx, DataItem& item) { (*routines)(ctx, item); });
}

}  // namespace korch
