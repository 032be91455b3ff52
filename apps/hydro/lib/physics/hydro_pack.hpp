// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro update of a whole packet of blocks in one launch (docs/residency.md, "Packets of
// resident blocks"): the per-cell EulerKernel over (entry, i, j, k) of every entry, each entry's
// variables addressed where the packet keeps them (the resident grid's device copy, or the
// packet's own buffer), then one reduction of the next time step over the packet. What device
// packets run on CUDA and HIP builds; host builds run the host sweep per entry instead, and the
// tests run this on the host to check both give the same bits.
#pragma once

#include "hydro_update.hpp"

#include <korch/backend/thread_spaces.hpp>
#include <korch/packet_pack.hpp>

namespace korch::hydro {

// Updates every entry of `pack` from P.euler.state into P.euler.next_state on `space`, fences it,
// records the packet's smallest stable dt in P.box_dt (at its first block) and throws where
// P.fail_block is one of its blocks.
void update_pack(const DeviceTaskSpace& space, const StepParameters& P, const PacketPack& pack);

}  // namespace korch::hydro
