// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/packet_pack.hpp>

#include <korch/error.hpp>

#include <algorithm>

namespace korch {

PacketPack::PacketPack(const DataPacket& packet)
    : entries_(packet.device_entries()),
      host_entries_(packet.size() > 0 ? &packet.entry(0) : nullptr),
      source_(&packet.source()),
      n_entries_(static_cast<int>(packet.size())),
      n_scratch_(packet.scratch_count()),
      extent_{0, 0, 0} {
  const int n_vars = packet.source().n_vars();
  if (n_vars > max_variables) {
    throw Error::format(
        "{}: a PacketPack addresses at most {} variables and the source has {}: use on_packet_entry or "
        "on_box for this action",
        packet.describe(), max_variables, n_vars);
  }
  if (packet.source().n_face_vars() > max_variables) {
    throw Error::format(
        "{}: a PacketPack addresses at most {} face variables and the source has {}: use on_packet_entry or "
        "on_box for this action",
        packet.describe(), max_variables, packet.source().n_face_vars());
  }
  for (int v = 0; v < max_variables; ++v) {
    const auto [section, slot] = packet.device_place(v);
    place_[v] = section < 0 ? -1 : section * slot_range + slot;
    const auto [face_section, face_slot] = packet.face_place(v);
    face_place_[v] = face_section < 0 ? -1 : face_section * slot_range + face_slot;
  }
  for (std::size_t e = 0; e < packet.size(); ++e) {
    const PacketEntryMeta& m = packet.entry(e);
    for (int d = 0; d < 3; ++d) extent_[d] = std::max(extent_[d], m.hi[d] - m.lo[d]);
  }
}

}  // namespace korch
