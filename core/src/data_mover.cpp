// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/data_mover.hpp>

#include <korch/error.hpp>

#include <fmt/format.h>

namespace korch {

TransferBytes DataMover::operator()(DataPacket& packet, const DeviceTaskSpace& instance) const {
  TransferBytes moved;
  switch (direction_) {
    case MoveDirection::host_to_device:
      packet.copy_to_device(instance);
      moved.host_to_device = packet.bytes_to_device();
      break;
    case MoveDirection::device_to_host:
      packet.copy_to_host(instance);
      moved.device_to_host = packet.bytes_to_host();
      break;
    case MoveDirection::device_to_device:
      packet.move_on_device(instance);
      moved.device_to_device = packet.buffer_bytes();
      break;
  }
  instance.fence();
  return moved;
}

}  // namespace korch
