// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Kernel index spaces over the cells of LayoutRight boxes (docs/backends.md, "Kernels over
// cells"). Kokkos' MDRangePolicy iterates its first index fastest on CUDA and HIP unless told
// otherwise, and tiles each index by 2 or 16: over (box, i, j, k) a warp then reads 32 cells of 32
// different rows, a 32-byte sector for each 8-byte value, and a box stored with extent 1 along k
// idles half its threads. So:
//   CellRange   the cells of several boxes as one flat range, k fastest: neighbouring threads take
//               neighbouring cells, no thread falls past an odd extent, whatever Kokkos' version;
//   cell_policy an MDRangePolicy iterating its last index fastest, tiled on a GPU so that a warp
//               reads rows of contiguous cells (for kernels that keep Kokkos' (i, j, k) form).
#pragma once

#include "korch/backend/launch_hint.hpp"
#include "korch/backend/spaces.hpp"
#include "korch/error.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cstdint>

namespace korch {

class CellRange {
 public:
  using Policy = Kokkos::IndexType<std::int64_t>;

  // `boxes` boxes of n[0] x n[1] x n[2] cells each (any extent may be 1).
  CellRange(int boxes, const int (&n)[3]) : boxes_(boxes), n_{n[0], n[1], n[2]} {
    const std::int64_t per_box = std::int64_t{n[0]} * n[1] * n[2];
    if (boxes < 0 || n[0] < 0 || n[1] < 0 || n[2] < 0 || per_box > INT32_MAX)
      throw Error::format(
          "cell range: {} boxes of {} x {} x {} cells: give counts >= 0 and boxes of fewer than 2^31 cells", boxes,
          n[0], n[1], n[2]);
    per_box_ = static_cast<int>(per_box);
  }

  std::int64_t size() const noexcept { return std::int64_t{boxes_} * per_box_; }
  template <class Space>
  Kokkos::RangePolicy<Space, Policy, ConcurrentLaunchHint> policy(const Space& space) const {
    return Kokkos::RangePolicy<Space, Policy, ConcurrentLaunchHint>(space, 0, size());
  }

  // Flat index t as (box, i, j, k). One 64-bit division, the rest in 32 bits.
  KOKKOS_INLINE_FUNCTION void cell(std::int64_t t, int& box, int& i, int& j, int& k) const noexcept {
    const std::int64_t b = t / per_box_;
    int c = static_cast<int>(t - b * per_box_);
    box = static_cast<int>(b);
    k = c % n_[2];
    c /= n_[2];
    j = c % n_[1];
    i = c / n_[1];
  }

 private:
  int boxes_;
  int per_box_ = 0;
  int n_[3];
};

// The threads that run in lockstep on the backend's GPU (a warp; a wavefront on AMD's).
#if defined(KOKKOS_ENABLE_HIP)
inline constexpr int gpu_warp_threads = 64;
#else
inline constexpr int gpu_warp_threads = 32;
#endif

// The tile of an MDRangePolicy over LayoutRight cells on a GPU, for extents `extent` (any rank):
// one warp of `warp` threads. The last index with more than one value (k, or j for a box stored
// with extent 1 along k) gets the widest tile of 32, 16 or 8 (at most `warp`) that leaves at most
// an eighth of its threads past the end (else the one that leaves the fewest; a power of two at or
// above extents under 8), the indices before it the rest of the warp, innermost first. A tile of
// one warp is read as its rows of contiguous cells however Kokkos orders threads inside a block.
template <std::size_t N>
std::array<std::int64_t, N> gpu_cell_tiles(const std::array<std::int64_t, N>& extent, int warp = gpu_warp_threads) {
  std::array<std::int64_t, N> tile;
  tile.fill(1);
  int c = static_cast<int>(N) - 1;
  while (c >= 0 && extent[c] < 2) --c;
  if (c < 0) return tile;
  const auto round_up_pow2 = [](std::int64_t n) {
    std::int64_t p = 1;
    while (p < n) p *= 2;
    return p;
  };
  const auto past_end = [&](std::int64_t t) { return (extent[c] + t - 1) / t * t - extent[c]; };
  if (extent[c] < 8) {
    tile[c] = round_up_pow2(extent[c]);
  } else {
    tile[c] = 8;
    for (std::int64_t t : {16, 32})
      if (t <= warp && (past_end(t) * 8 <= extent[c] + past_end(t) || past_end(t) < past_end(tile[c]))) tile[c] = t;
  }
  std::int64_t threads = tile[c];
  for (int d = c - 1; d >= 0 && threads < warp; --d) {
    tile[d] = std::min(warp / threads, round_up_pow2(extent[d] < 1 ? 1 : extent[d]));
    threads *= tile[d];
  }
  return tile;
}

template <int N, class Space>
using CellPolicy =
    Kokkos::MDRangePolicy<Space, Kokkos::Rank<N, Kokkos::Iterate::Right, Kokkos::Iterate::Right>, ConcurrentLaunchHint>;

// An MDRangePolicy from lo to hi (N indices) whose last index runs fastest, on `space`; tiled by
// gpu_cell_tiles where the space's memory is not the host's, Kokkos' own tiles on the host.
template <int N, class Space>
CellPolicy<N, Space> cell_policy(const Space& space, const std::array<std::int64_t, N>& lo,
                                 const std::array<std::int64_t, N>& hi) {
  using Policy = CellPolicy<N, Space>;
  typename Policy::point_type begin, end;
  for (int d = 0; d < N; ++d) {
    begin[d] = lo[d];
    end[d] = hi[d] > lo[d] ? hi[d] : lo[d];
  }
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Space::memory_space>::accessible) {
    return Policy(space, begin, end);
  } else {
    std::array<std::int64_t, N> extent;
    for (int d = 0; d < N; ++d) extent[d] = end[d] - begin[d];
    const auto t = gpu_cell_tiles<N>(extent);
    typename Policy::tile_type tiles;
    for (int d = 0; d < N; ++d) tiles[d] = t[d];
    return Policy(space, begin, end, tiles);
  }
}

}  // namespace korch
