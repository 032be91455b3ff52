// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#pragma once

#include <cstdint>

namespace korch {

// Bytes that data movers copied, by direction (a cycle's total: Runtime::last_transfers()). On a
// host build the device side is a separate allocation, so the copies are made and counted as on a GPU.
struct TransferBytes {
  std::uint64_t host_to_device = 0;
  std::uint64_t device_to_host = 0;
  std::uint64_t device_to_device = 0;
  std::uint64_t total() const noexcept { return host_to_device + device_to_host + device_to_device; }
  TransferBytes& operator+=(const TransferBytes& other) noexcept {
    host_to_device += other.host_to_device;
    device_to_host += other.device_to_host;
    device_to_device += other.device_to_device;
    return *this;
  }
};

}  // namespace korch
