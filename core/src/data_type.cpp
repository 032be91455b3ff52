#include <korch/data_type.hpp>

#include <korch/action_metadata.hpp>
#include <korch/block.hpp>
#include <korch/data_packet.hpp>
#include <korch/tile.hpp>

namespace korch {

const char* to_string(DataType type) noexcept {
  switch (type) {
    case DataType::tile: return "tile";
    case DataType::block: return "block";
    case DataType::packet_of_blocks: return "packet_of_blocks";
    case DataType::packet_of_tiles: return "packet_of_tiles";
    case DataType::action_metadata: return "action_metadata";
  }
  return "?";
}

std::optional<DataType> parse_data_type(const std::string& text) {
  for (DataType t : {DataType::tile, DataType::block, DataType::packet_of_blocks, DataType::packet_of_tiles,
                     DataType::action_metadata}) {
    if (text == to_string(t)) return t;
  }
  return std::nullopt;
}

std::optional<DataType> data_type_of(const DataItem& item) noexcept {
  if (dynamic_cast<const Tile*>(&item)) return DataType::tile;
  if (dynamic_cast<const Block*>(&item)) return DataType::block;
  if (auto* p = dynamic_cast<const DataPacket*>(&item)) return p->data_type();
  if (dynamic_cast<const ActionMetadata*>(&item)) return DataType::action_metadata;
  return std::nullopt;
}

}  // namespace korch
