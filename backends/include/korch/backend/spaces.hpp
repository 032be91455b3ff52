// The execution and memory spaces korch runs on, chosen once from the Kokkos backend.
// Only backends/ names concrete Kokkos spaces; core/ and pipelines/ use these aliases.
#pragma once

#include "korch/backend/kokkos_compat.hpp"

#include <Kokkos_Core.hpp>

namespace korch {

// Work a team thread does on its own on the host. Kokkos 3.4's OpenMP space may only be dispatched
// from the thread that initialized Kokkos, and Serial is safe to dispatch from many std::threads,
// so every host team thread runs its per-item kernels on Serial.
using HostTaskSpace = Kokkos::Serial;

// The backend's primary space: the GPU for cuda/hip, the parallel host space otherwise.
using DeviceExecSpace = Kokkos::DefaultExecutionSpace;
using DeviceMemSpace = DeviceExecSpace::memory_space;

// Host memory that the device can copy from asynchronously.
#if defined(KOKKOS_ENABLE_CUDA)
using PinnedHostMemSpace = Kokkos::CudaHostPinnedSpace;
#elif defined(KOKKOS_ENABLE_HIP)
using PinnedHostMemSpace = compat::HIPHostPinnedSpace;
#else
using PinnedHostMemSpace = Kokkos::HostSpace;
#endif

// True when the device is a real accelerator with its own memory.
inline constexpr bool device_is_accelerator =
    !Kokkos::SpaceAccessibility<Kokkos::HostSpace, DeviceMemSpace>::accessible;

}  // namespace korch
