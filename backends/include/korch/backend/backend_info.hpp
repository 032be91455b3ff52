// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What this build of korch runs on: korch and Kokkos versions, enabled spaces, concurrency.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace korch {

struct BackendInfo {
  std::string korch_version;
  std::string backend;                         // the KORCH_BACKEND korch was configured with
  std::string kokkos_version;                  // the Kokkos korch was compiled against
  std::vector<std::string> execution_spaces;   // enabled Kokkos execution spaces
  std::vector<std::string> memory_spaces;      // enabled Kokkos memory spaces
  std::string device_execution_space;          // korch::DeviceExecSpace, chosen by the backend
  std::string kokkos_default_execution_space;  // Kokkos::DefaultExecutionSpace
  std::string team_host_space;                 // what each team thread runs its host work on (HostTaskSpace)
  int concurrency = 0;                         // of DeviceExecSpace (needs Kokkos initialized; else 0)
  bool kokkos_kernels = false;
  bool device_fp_contract = false;  // KORCH_DEVICE_FP_CONTRACT: device code may use FMAs (docs/floating-point.md)
};

// Collects the facts above. Safe before Kokkos::initialize (concurrency is then 0).
BackendInfo backend_info();

// Prints the facts as "key: value" lines, the format of the korch-info program.
void print_backend_info(std::ostream& out, const BackendInfo& info);

}  // namespace korch
