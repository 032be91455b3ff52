// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/data_type.hpp>

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

}  // namespace korch
