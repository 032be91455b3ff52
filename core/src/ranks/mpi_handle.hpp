// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal: the MPI communicator of a korch::Communicator (MPI builds only).
#pragma once

#include <korch/communicator.hpp>
#include <korch/config.hpp>

#if KORCH_HAVE_MPI
#include <mpi.h>

namespace korch::detail {

inline MPI_Comm mpi_comm(const Communicator& c) { return MPI_Comm_f2c(static_cast<MPI_Fint>(c.handle())); }

}  // namespace korch::detail
#endif
