// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Data mover: moves a data packet host -> device, device -> host or
// device -> device (another allocation) on the calling thread's own instance and fences that
// instance before it returns, so the packet may go to another thread at once.
#pragma once

#include <korch/configuration.hpp>
#include <korch/data_packet.hpp>
#include <korch/transfer_bytes.hpp>

namespace korch {

class DataMover {
 public:
  explicit DataMover(MoveDirection direction) : direction_(direction) {}
  MoveDirection direction() const noexcept { return direction_; }
  // Moves the packet and returns what it copied.
  TransferBytes operator()(DataPacket& packet, const DeviceTaskSpace& instance) const;

 private:
  MoveDirection direction_;
};

}  // namespace korch
