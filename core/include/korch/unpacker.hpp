// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Unpacker: copies a packet that is back on the host into the grid and releases its
// pool buffers.
#pragma once

#include <korch/data_packet.hpp>

namespace korch {

class Unpacker {
 public:
  void operator()(DataPacket& packet) const { packet.unpack(); }
};

}  // namespace korch
