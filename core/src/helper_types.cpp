// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "helper_types.hpp"

namespace korch::detail {

bool helper_types_ok(const HelperConfig& h, std::string& why) {
  const DataType in = h.input, out = h.output;
  switch (h.kind) {
    case HelperKind::mover:
    case HelperKind::unpacker:
    case HelperKind::mover_unpacker:
      if (!is_packet(in) || out != in) {
        why = "takes and gives the same packet type (packet_of_blocks or packet_of_tiles)";
        return false;
      }
      return true;
    case HelperKind::splitter:
    case HelperKind::mover_unpacker_splitter:
      if ((in == DataType::packet_of_blocks && (out == DataType::block || out == DataType::tile)) ||
          (in == DataType::packet_of_tiles && out == DataType::tile) ||
          (h.kind == HelperKind::splitter && in == DataType::block && out == DataType::tile)) {
        return true;
      }
      why =
          "splits packet_of_blocks into blocks or tiles, packet_of_tiles into tiles, or (splitter only) blocks into "
          "tiles";
      return false;
    case HelperKind::aggregator:
    case HelperKind::aggregator_mover:
      if ((in == DataType::tile && (out == DataType::packet_of_tiles || out == DataType::packet_of_blocks)) ||
          (in == DataType::block && out == DataType::packet_of_blocks) ||
          (h.kind == HelperKind::aggregator && in == DataType::tile && out == DataType::block) ||
          (h.kind == HelperKind::aggregator && (in == DataType::tile || in == DataType::block) &&
           out == DataType::action_metadata)) {
        return true;
      }
      why =
          "aggregates tiles into packet_of_tiles or packet_of_blocks, blocks into packet_of_blocks, or (aggregator "
          "only) tiles into blocks and tiles or blocks into action_metadata";
      return false;
    case HelperKind::router:
      if ((in == DataType::tile || in == DataType::block) && out == in) return true;
      why = "hands on the items it takes: tiles as tiles or blocks as blocks";
      return false;
  }
  return false;
}

}  // namespace korch::detail
