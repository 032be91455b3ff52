// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "korch/backend/backend_info.hpp"

#include "korch/backend/kokkos_compat.hpp"
#include "korch/backend/spaces.hpp"
#include "korch/config.hpp"

#include <Kokkos_Core.hpp>

#include <ostream>

namespace korch {

namespace {
std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}
}  // namespace

BackendInfo backend_info() {
  BackendInfo info;
  info.korch_version = KORCH_VERSION_STRING;
  info.backend = KORCH_BACKEND_NAME;
  info.kokkos_version = compat::kokkos_version_string();
  info.kokkos_kernels = KORCH_HAVE_KOKKOSKERNELS;
  info.device_fp_contract = KORCH_DEVICE_FP_CONTRACT;
#if defined(KOKKOS_ENABLE_SERIAL)
  info.execution_spaces.push_back("Serial");
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  info.execution_spaces.push_back("OpenMP");
#endif
#if defined(KOKKOS_ENABLE_THREADS)
  info.execution_spaces.push_back("Threads");
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  info.execution_spaces.push_back("Cuda");
#endif
#if defined(KOKKOS_ENABLE_HIP)
  info.execution_spaces.push_back("HIP");
#endif
  info.memory_spaces.push_back("HostSpace");
#if defined(KOKKOS_ENABLE_CUDA)
  info.memory_spaces.insert(info.memory_spaces.end(), {"CudaSpace", "CudaHostPinnedSpace", "CudaUVMSpace"});
#endif
#if defined(KOKKOS_ENABLE_HIP)
  info.memory_spaces.insert(info.memory_spaces.end(), {"HIPSpace", "HIPHostPinnedSpace"});
#endif
  info.device_execution_space = DeviceExecSpace::name();
  info.kokkos_default_execution_space = Kokkos::DefaultExecutionSpace::name();
  info.team_host_space = compat::serial_host_space_is_serial ? "Serial, one instance per team thread"
                                                             : "OpenMP, a one-thread instance per team thread";
  if (compat::is_initialized()) info.concurrency = compat::concurrency<DeviceExecSpace>();
  return info;
}

void print_backend_info(std::ostream& out, const BackendInfo& info) {
  out << "korch version:           " << info.korch_version << '\n'
      << "korch backend:           " << info.backend << '\n'
      << "Kokkos version:          " << info.kokkos_version << '\n'
      << "Kokkos Kernels:          " << (info.kokkos_kernels ? "yes" : "no") << '\n'
      << "device FMA contraction:  " << (info.device_fp_contract ? "on (host and device bits differ)" : "off") << '\n'
      << "execution spaces:        " << join(info.execution_spaces) << '\n'
      << "device execution space:  " << info.device_execution_space << '\n'
      << "Kokkos default space:    " << info.kokkos_default_execution_space << '\n'
      << "team host space:         " << info.team_host_space << '\n'
      << "memory spaces:           " << join(info.memory_spaces) << '\n'
      << "concurrency:             " << info.concurrency << '\n';
}

}  // namespace korch
