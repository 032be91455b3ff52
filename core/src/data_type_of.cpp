// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The data type of an item: needs every item class (and so Kokkos), unlike the names in
// data_type.cpp, which a configuration reader uses alone.
#include <korch/action_metadata.hpp>
#include <korch/block.hpp>
#include <korch/data_packet.hpp>
#include <korch/data_type.hpp>
#include <korch/tile.hpp>

namespace korch {

std::optional<DataType> data_type_of(const DataItem& item) noexcept {
  switch (item.kind()) {
    case DataItem::Kind::tile: return DataType::tile;
    case DataItem::Kind::block: return DataType::block;
    case DataItem::Kind::packet: return static_cast<const DataPacket&>(item).data_type();
    case DataItem::Kind::other: break;
  }
  if (dynamic_cast<const ActionMetadata*>(&item)) return DataType::action_metadata;
  return std::nullopt;
}

}  // namespace korch
