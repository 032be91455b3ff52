// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One entry of a data packet (a block or a tile the packet carries) as a typed action routine sees
// it: its metadata, its cell boxes in entry-local indices (0 is the first cell the packet stores of
// it) and its variables on the device. Design: docs/typed-actions.md.
#pragma once

#include <korch/data_packet.hpp>
#include <korch/grid.hpp>

#include <cstddef>

namespace korch {

class PacketEntry {
 public:
  PacketEntry(DataPacket& packet, std::size_t index) : packet_(&packet), index_(index), meta_(&packet.entry(index)) {
    for (int d = 0; d < 3; ++d) {
      stored_.hi[d] = meta_->hi[d] - meta_->lo[d];
      interior_.lo[d] = meta_->interior_lo[d] - meta_->lo[d];
      interior_.hi[d] = meta_->interior_hi[d] - meta_->lo[d];
    }
  }

  DataPacket& packet() const noexcept { return *packet_; }
  std::size_t index() const noexcept { return index_; }
  const PacketEntryMeta& meta() const noexcept { return *meta_; }
  int block_id() const noexcept { return meta_->block; }
  // The tile's index in its block, or -1 for an entry that is a whole block.
  int tile_index() const noexcept { return meta_->tile; }
  int level() const noexcept { return meta_->level; }

  // Entry-local boxes: the cells the packet stores (guard cells included for a block) and the
  // cells to update (the block's interior, or the tile's box).
  const Box& stored() const noexcept { return stored_; }
  const Box& interior() const noexcept { return interior_; }

  // A variable of the entry on the device (the packet must be on the device), indexed entry-local.
  DataPacket::DeviceVar var(int var) const { return packet_->device_var(index_, var); }
  DataPacket::DeviceVar scratch(int scratch) const { return packet_->device_scratch(index_, scratch); }
  // A face variable of the entry across `axis` on the device, indexed entry-local over
  // face_box(stored(), axis) (face i is the low face of cell i), and the faces bounding the cells
  // to update: face_box(interior(), axis).
  DataPacket::DeviceVar face(int axis, int var) const { return packet_->device_face(index_, axis, var); }
  Box faces(int axis) const noexcept { return face_box(interior_, axis); }

 private:
  DataPacket* packet_;
  std::size_t index_;
  const PacketEntryMeta* meta_;
  Box stored_;
  Box interior_;
};

}  // namespace korch
