// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/splitter.hpp>

#include <korch/block.hpp>
#include <korch/data_packet.hpp>
#include <korch/error.hpp>
#include <korch/tile.hpp>

#include <fmt/format.h>

namespace korch {

std::vector<std::shared_ptr<DataItem>> Splitter::split(const DataItem& item) const {
  std::vector<std::shared_ptr<DataItem>> out;
  if (auto* block = dynamic_cast<const Block*>(&item)) {
    if (output_ != DataType::tile) {
      throw Error::format("splitter: {} can only be split into tiles, not {}", item.describe(), to_string(output_));
    }
    for (auto& t : block->tiles()) out.push_back(std::move(t));
    return out;
  }
  auto* packet = dynamic_cast<const DataPacket*>(&item);
  if (!packet) {
    throw Error::format("splitter: {} is neither a block nor a data packet: only those can be split", item.describe());
  }
  if (packet->state() != DataPacket::State::unpacked) {
    throw Error::format("splitter: {} is not unpacked: unpack it (mover_unpacker) before splitting",
                        packet->describe());
  }
  const DataSource& source = packet->source();
  if (packet->data_type() == DataType::packet_of_blocks) {
    for (int b : packet->block_ids()) {
      if (output_ == DataType::block) {
        out.push_back(std::make_shared<Block>(source, b));
      } else if (output_ == DataType::tile) {
        const int n_tiles = static_cast<int>(source.tiles_of(b).size());
        for (int t = 0; t < n_tiles; ++t) out.push_back(std::make_shared<Tile>(source, b, t));
      } else {
        throw Error::format("splitter: cannot split {} into {}", packet->describe(), to_string(output_));
      }
    }
  } else {
    if (output_ != DataType::tile) {
      throw Error::format("splitter: a packet of tiles splits into tiles, not {}", to_string(output_));
    }
    for (std::size_t i = 0; i < packet->size(); ++i) {
      out.push_back(std::make_shared<Tile>(source, packet->entry(i).block, packet->entry(i).tile));
    }
  }
  return out;
}

}  // namespace korch
