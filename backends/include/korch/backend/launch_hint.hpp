// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// How kernels that several team threads may launch at once reach the GPU.
#pragma once

#include <Kokkos_Core.hpp>

namespace korch {

// The policy trait of kernels that several team threads may launch at once: the functor goes to
// the GPU as kernel arguments (Kokkos' light-weight hint; 4 KB at most, larger ones through the
// execution space instance's global memory). Left to itself Kokkos 3.4 sends a functor over 512
// bytes, a PacketPack's among them, through one constant-memory buffer and one staging buffer
// without a lock: threads launching at the same time then run each other's functors
// (docs/backends.md, "Kernels from several threads").
using ConcurrentLaunchHint = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;

}  // namespace korch
