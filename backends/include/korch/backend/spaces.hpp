// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The execution and memory spaces korch runs on, chosen once from the Kokkos backend.
// Only backends/ names concrete Kokkos spaces; core/ and pipelines/ use these aliases.
#pragma once

#include "korch/backend/kokkos_compat.hpp"
#include "korch/config.hpp"

#include <Kokkos_Core.hpp>

namespace korch {

// Work a team thread does on its own on the host. Kokkos 3.4's OpenMP space may only be dispatched
// from the thread that initialized Kokkos, and Serial is safe to dispatch from many std::threads,
// so every host team thread runs its per-item kernels on Serial (on a one-thread OpenMP instance
// where a Kokkos 4 or 5 has no Serial: compat::SerialHostSpace).
using HostTaskSpace = compat::SerialHostSpace;

// The backend's primary space, as chosen by KORCH_BACKEND (not Kokkos' default, which can differ
// when a user's Kokkos has several backends): the GPU for cuda/hip, the parallel host space otherwise.
#if defined(KORCH_BACKEND_SERIAL)
using DeviceExecSpace = Kokkos::Serial;
#elif defined(KORCH_BACKEND_OPENMP)
using DeviceExecSpace = Kokkos::OpenMP;
#elif defined(KORCH_BACKEND_THREADS)
using DeviceExecSpace = Kokkos::Threads;
#elif defined(KORCH_BACKEND_CUDA)
using DeviceExecSpace = Kokkos::Cuda;
#elif defined(KORCH_BACKEND_HIP)
using DeviceExecSpace = compat::HIP;
#else
#error "korch/config.hpp names no backend"
#endif
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
