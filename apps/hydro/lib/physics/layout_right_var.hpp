// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One variable of one block as the EulerKernel reads it inside a kernel over many blocks: its
// first cell and the extents that make (i, j, k) LayoutRight, k fastest. A plain struct, so that a
// kernel builds one per block and variable without a View's bookkeeping.
#pragma once

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace korch::hydro {

struct LayoutRightVar {
  double* data;
  int nj, nk;
  KOKKOS_INLINE_FUNCTION double& operator()(int i, int j, int k) const {
    return data[(static_cast<std::size_t>(i) * static_cast<std::size_t>(nj) + static_cast<std::size_t>(j)) *
                    static_cast<std::size_t>(nk) +
                static_cast<std::size_t>(k)];
  }
};

}  // namespace korch::hydro
