// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "device_messages.hpp"

#include <korch/backend/spaces.hpp>
#include <korch/config.hpp>
#include <korch/error.hpp>

#include <cstdlib>
#include <string>

#if KORCH_HAVE_MPI
#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

namespace korch::detail {

bool mpi_reports_device_memory() {
#if KORCH_HAVE_MPI && defined(KOKKOS_ENABLE_CUDA) && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#elif KORCH_HAVE_MPI && defined(KOKKOS_ENABLE_HIP) && defined(MPIX_ROCM_AWARE_SUPPORT) && MPIX_ROCM_AWARE_SUPPORT
  return MPIX_Query_rocm_support() == 1;
#else
  return false;
#endif
}

DeviceMessages device_messages_from_environment() {
  const char* value = std::getenv("KORCH_GPU_AWARE_MPI");
  if (value == nullptr) return DeviceMessages::automatic;
  const std::string v(value);
  if (v == "auto" || v.empty()) return DeviceMessages::automatic;
  if (v == "0") return DeviceMessages::staged;
  if (v == "1") return DeviceMessages::direct;
  throw Error::format(
      "guard-cell exchange: KORCH_GPU_AWARE_MPI is '{}': use auto (send from device memory where the MPI library "
      "reports it can), 0 (stage through host memory) or 1 (send from device memory)",
      v.substr(0, 40));
}

bool direct_device_messages(DeviceMessages mode) {
  const bool reported = mpi_reports_device_memory();
  switch (mode) {
    case DeviceMessages::automatic: return reported;
    case DeviceMessages::staged: return false;
    case DeviceMessages::direct:
      if (reported || Kokkos::SpaceAccessibility<Kokkos::HostSpace, DeviceMemSpace>::accessible) return true;
      throw Error(
          "guard-cell exchange: device messages are set to direct (KORCH_GPU_AWARE_MPI=1 or set_device_messages), "
          "but the MPI library does not report that it reads device memory (MPIX_Query_cuda_support / "
          "MPIX_Query_rocm_support): use a GPU-aware MPI build, or staged or automatic messages");
  }
  return false;
}

}  // namespace korch::detail
