// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Copies on the device between a box of cells in any strides (a code's own device array) and a
// compact LayoutRight (i, j, k) array of the same box: one kernel over the box on a team thread's
// instance, not fenced. Used where a block in a code's own device layout meets korch's packed
// layout (docs/residency.md, "A code's own device arrays").
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/backend/thread_spaces.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>

namespace korch {

// A box of extents (ni, nj, nk) and the distance in doubles between neighbours along i, j and k.
struct StridedBox {
  std::array<std::int64_t, 3> extent{0, 0, 0};
  std::array<std::int64_t, 3> stride{0, 0, 0};
  std::int64_t cells() const noexcept { return extent[0] * extent[1] * extent[2]; }
  // Whether the box fills one contiguous range (in some order of its indices).
  bool contiguous() const noexcept {
    std::int64_t reach = 1;
    for (int d = 0; d < 3; ++d) reach += (extent[d] - 1) * stride[d];
    return reach == cells();
  }
  // Whether the box is laid out as korch packs it: LayoutRight (i, j, k), k contiguous.
  bool layout_right() const noexcept {
    return (extent[2] < 2 || stride[2] == 1) && (extent[1] < 2 || stride[1] == extent[2]) &&
           (extent[0] < 2 || stride[0] == extent[1] * extent[2]);
  }
};

// compact (LayoutRight over the box) <- strided.
inline void gather_strided(const DeviceTaskSpace& instance, double* compact, const double* strided,
                           const StridedBox& box) {
  if (box.cells() == 0) return;
  const std::int64_t nj = box.extent[1], nk = box.extent[2];
  const std::int64_t si = box.stride[0], sj = box.stride[1], sk = box.stride[2];
  Kokkos::parallel_for(
      "korch gather (device, strided)",
      Kokkos::RangePolicy<DeviceTaskSpace, Kokkos::IndexType<std::int64_t>>(instance, 0, box.cells()),
      KOKKOS_LAMBDA(std::int64_t c) {
        const std::int64_t k = c % nk, j = (c / nk) % nj, i = c / (nj * nk);
        compact[c] = strided[i * si + j * sj + k * sk];
      });
}

// strided <- compact.
inline void scatter_strided(const DeviceTaskSpace& instance, double* strided, const double* compact,
                            const StridedBox& box) {
  if (box.cells() == 0) return;
  const std::int64_t nj = box.extent[1], nk = box.extent[2];
  const std::int64_t si = box.stride[0], sj = box.stride[1], sk = box.stride[2];
  Kokkos::parallel_for(
      "korch scatter (device, strided)",
      Kokkos::RangePolicy<DeviceTaskSpace, Kokkos::IndexType<std::int64_t>>(instance, 0, box.cells()),
      KOKKOS_LAMBDA(std::int64_t c) {
        const std::int64_t k = c % nk, j = (c / nk) % nj, i = c / (nj * nk);
        strided[i * si + j * sj + k * sk] = compact[c];
      });
}

}  // namespace korch
