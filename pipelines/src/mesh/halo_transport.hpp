// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Point-to-point transport of halo bytes between ranks (MPI where korch has it).
#pragma once

#include <korch/communicator.hpp>

#include <vector>

namespace korch::mesh::detail {

// Sends send[q] to every rank q with bytes for it and receives receive[r] (sized by the caller, as
// both sides know the lengths) from every rank r; collective over the ranks that exchange.
void exchange_halo_bytes(const Communicator& comm, const std::vector<std::vector<char>>& send,
                         std::vector<std::vector<char>>& receive);

}  // namespace korch::mesh::detail
