// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which grid variables a data packet carries in which direction (a configuration's aggregators name
// them; DataPacket lays them out). Kept apart from data_packet.hpp so that reading a configuration
// needs no Kokkos.
#pragma once

#include <vector>

namespace korch {

// Cell variables: all three lists empty means every variable copy-in-out. Face variables
// (DataSource::n_face_vars, docs/data-packets.md "Face variables") travel where listed, and all
// copy-in-out when no list, of cells or of faces, names any variable.
struct PacketVariables {
  std::vector<int> copy_in;
  std::vector<int> copy_in_out;
  std::vector<int> copy_out;
  int scratch = 0;  // scratch variables per entry (device only, never transferred)
  std::vector<int> face_copy_in;
  std::vector<int> face_copy_in_out;
  std::vector<int> face_copy_out;
};

}  // namespace korch
