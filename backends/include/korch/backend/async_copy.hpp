// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Byte copies between pool memory on a team thread's own execution-space instance. On CUDA/HIP the
// instance is the thread's stream, so the copy is asynchronous with respect to every other thread;
// the caller fences its instance before it hands the data to another thread.
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/backend/thread_spaces.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace korch {

namespace detail {
template <class Space>
using ByteView = Kokkos::View<char*, Space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
}

// Pinned host -> device.
inline void copy_to_device_async(const DeviceTaskSpace& instance, void* device_dst, const void* host_src,
                                 std::size_t bytes) {
  if (bytes == 0) return;
  detail::ByteView<DeviceMemSpace> dst(static_cast<char*>(device_dst), bytes);
  detail::ByteView<PinnedHostMemSpace> src(static_cast<char*>(const_cast<void*>(host_src)), bytes);
  Kokkos::deep_copy(instance, dst, src);
}

// Device -> pinned host.
inline void copy_to_host_async(const DeviceTaskSpace& instance, void* host_dst, const void* device_src,
                               std::size_t bytes) {
  if (bytes == 0) return;
  detail::ByteView<PinnedHostMemSpace> dst(static_cast<char*>(host_dst), bytes);
  detail::ByteView<DeviceMemSpace> src(static_cast<char*>(const_cast<void*>(device_src)), bytes);
  Kokkos::deep_copy(instance, dst, src);
}

// Device -> device (another allocation; on a multi-device node this is where a peer copy would go).
inline void copy_device_to_device_async(const DeviceTaskSpace& instance, void* device_dst, const void* device_src,
                                        std::size_t bytes) {
  if (bytes == 0) return;
  detail::ByteView<DeviceMemSpace> dst(static_cast<char*>(device_dst), bytes);
  detail::ByteView<DeviceMemSpace> src(static_cast<char*>(const_cast<void*>(device_src)), bytes);
  Kokkos::deep_copy(instance, dst, src);
}

}  // namespace korch
