// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Halo bytes travel as one message per pair of neighbouring ranks (nonblocking sends and receives
// on the partition's communicator), so a rank moves only the bytes of its own halo.
#include "halo_transport.hpp"

#include <korch/config.hpp>
#include <korch/error.hpp>

#if KORCH_HAVE_MPI
#include <mpi.h>
#endif

namespace korch::mesh::detail {

void exchange_halo_bytes(const Communicator& comm, const std::vector<std::vector<char>>& send,
                         std::vector<std::vector<char>>& receive) {
  if (comm.size() == 1) return;
#if KORCH_HAVE_MPI
  const MPI_Comm c = MPI_Comm_f2c(static_cast<MPI_Fint>(comm.handle()));
  const int tag = 7351;  // mesh halos
  std::vector<MPI_Request> requests;
  for (std::size_t r = 0; r < receive.size(); ++r)
    if (!receive[r].empty()) {
      requests.emplace_back();
      MPI_Irecv(receive[r].data(), static_cast<int>(receive[r].size()), MPI_BYTE, static_cast<int>(r), tag, c,
                &requests.back());
    }
  for (std::size_t q = 0; q < send.size(); ++q)
    if (!send[q].empty()) {
      requests.emplace_back();
      MPI_Isend(send[q].data(), static_cast<int>(send[q].size()), MPI_BYTE, static_cast<int>(q), tag, c,
                &requests.back());
    }
  const int rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS)
    throw Error::format("mesh::RankExecutor: rank {}: the halo exchange failed (MPI error {})", comm.rank(), rc);
#else
  (void)send;
  (void)receive;
  throw Error::format("mesh::RankExecutor: {} ranks but korch was built without MPI", comm.size());
#endif
}

}  // namespace korch::mesh::detail
