// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/data_mover.hpp>

#include <korch/error.hpp>

#include <fmt/format.h>

namespace korch {

void DataMover::operator()(DataPacket& packet, const DeviceTaskSpace& instance) const {
  switch (direction_) {
    case MoveDirection::host_to_device: packet.copy_to_device(instance); break;
    case MoveDirection::device_to_host: packet.copy_to_host(instance); break;
    case MoveDirection::device_to_device: packet.move_on_device(instance); break;
  }
  instance.fence();
}

}  // namespace korch
