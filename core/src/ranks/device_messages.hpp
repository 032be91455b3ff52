// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal: whether guard-cell messages of blocks in device memory go straight from device memory
// to MPI (GPU-aware MPI) or through host memory (docs/residency.md, "Guard cells").
#pragma once

#include <korch/guard_cell_exchange.hpp>

namespace korch::detail {

// Whether the MPI library korch runs with says it reads and writes device memory
// (MPIX_Query_cuda_support, MPIX_Query_rocm_support); false on host builds and without MPI.
bool mpi_reports_device_memory();
// The mode an exchange starts with: KORCH_GPU_AWARE_MPI=auto|0|1 (automatic, staged, direct),
// automatic when unset. Throws korch::Error naming the variable for any other value.
DeviceMessages device_messages_from_environment();
// Whether `mode` sends straight from device memory here: automatic where the library reports it;
// direct anywhere device memory is host memory or the library reports it, else a korch::Error
// naming the fix.
bool direct_device_messages(DeviceMessages mode);

}  // namespace korch::detail
