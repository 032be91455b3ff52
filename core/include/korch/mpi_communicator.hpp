// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch::communicator_of(MPI_Comm): the korch::Communicator of a code's own MPI communicator, for
// codes that speak MPI themselves (docs/ranks.md). Only in korch built with MPI, which then is a
// public dependency of the korch package: find_package(korch) finds MPI, and korch::korch brings
// its include directories and libraries.
#pragma once

#include <korch/communicator.hpp>
#include <korch/config.hpp>

#if !KORCH_HAVE_MPI
#error "korch/mpi_communicator.hpp: this korch was built without MPI (KORCH_MPI=OFF or no MPI found)"
#endif

#include <mpi.h>

namespace korch {

inline Communicator communicator_of(MPI_Comm comm) {
  return Communicator::from_handle(static_cast<int>(MPI_Comm_c2f(comm)));
}

}  // namespace korch
