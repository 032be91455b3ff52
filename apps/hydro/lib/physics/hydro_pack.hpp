// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro update of a whole packet of blocks in a few launches over all its entries
// (docs/residency.md, "Packets of resident blocks"; docs/benchmarks.md, "The device kernels"),
// each entry's variables addressed where the packet keeps them (the resident grid's device copy,
// or the packet's own buffer): a face-flux kernel per direction into the packet's scratch and an
// update that reduces the next time step in the same pass (with the staged kernels, after a pass
// that predicts every cell's half-step state once), or one fused kernel doing both. What
// device packets run on CUDA and HIP builds; host builds run the host sweep per entry instead, and
// the tests run this on the host to check that all give the same bits.
#pragma once

#include "hydro_update.hpp"

#include <korch/backend/thread_spaces.hpp>
#include <korch/packet_pack.hpp>

namespace korch::hydro {

// The scratch variables per entry (PacketVariables::scratch) that `kernel` needs in `dim`
// dimensions: a packet with fewer than P.device_kernel's runs the next kernels it has room for
// (staged, then faces, then fused, which needs none).
int kernel_scratch(DeviceKernel kernel, int dim);

// Updates every entry of `pack` from P.euler.state into P.euler.next_state on `space` with the
// kernels P.device_kernel names, fences it, records the packet's smallest stable dt in P.box_dt
// (at its first block) and throws where P.fail_block is one of its blocks. Returns the kernels it
// ran.
DeviceKernel update_pack(const DeviceTaskSpace& space, const StepParameters& P, const PacketPack& pack);

}  // namespace korch::hydro
