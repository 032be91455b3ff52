// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The data types a thread team or helper works on: what a configuration
// edge carries and what the thin scheduler checks along every edge.
#pragma once

#include <optional>
#include <string>

namespace korch {

class DataItem;

enum class DataType { tile, block, packet_of_blocks, packet_of_tiles, action_metadata };

// "tile", "block", "packet_of_blocks", "packet_of_tiles", "action_metadata" (the JSON spelling).
const char* to_string(DataType type) noexcept;
std::optional<DataType> parse_data_type(const std::string& text);
inline bool is_packet(DataType type) noexcept {
  return type == DataType::packet_of_blocks || type == DataType::packet_of_tiles;
}
// The data type of an item (Tile, Block, DataPacket, ActionMetadata); nullopt for other items.
std::optional<DataType> data_type_of(const DataItem& item) noexcept;

}  // namespace korch
