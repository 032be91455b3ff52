// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Copies between a block's storage, in its owner's layout, and a data packet's buffer.
#pragma once

#include <korch/block_meta.hpp>
#include <korch/data_packet.hpp>
#include <korch/data_source.hpp>

#include <cstddef>
#include <cstring>
#include <vector>

namespace korch::detail {

// The block-local box a packet entry stores.
inline Box entry_box(const PacketEntryMeta& e) noexcept {
  Box box;
  for (int d = 0; d < 3; ++d) {
    box.lo[d] = e.lo[d];
    box.hi[d] = e.hi[d];
  }
  return box;
}

// Copies box `m` of the variables `vars` between a block's storage `data` (its cells or its faces
// across one axis) and a packed array, in the order (var, i, j, k). A source's block may have any strides; where k is
// contiguous, rows along k are memcpy's, and where the box spans whole j-k planes of a LayoutRight block (korch::Grid's
// blocks with their guard cells), one range per variable (this runs on the packing thread, on the
// path to the device).
template <bool ToPacket>
inline void copy_box(const BlockView& data, const Box& m, const std::vector<int>& vars, double* packed) {
  const std::size_t ni = static_cast<std::size_t>(m.hi[0] - m.lo[0]);
  const std::size_t nj = static_cast<std::size_t>(m.hi[1] - m.lo[1]);
  const std::size_t nk = static_cast<std::size_t>(m.hi[2] - m.lo[2]);
  if (ni == 0 || nj == 0 || nk == 0 || vars.empty()) return;
  auto copy = [](double* block, double* packet, std::size_t n) {
    if constexpr (ToPacket) {
      std::memcpy(packet, block, n * sizeof(double));
    } else {
      std::memcpy(block, packet, n * sizeof(double));
    }
  };
  const std::size_t ej = data.extent(2), ek = data.extent(3);
  const bool rows = data.stride(3) == 1;
  const bool whole_planes = rows && data.stride(2) == ek && data.stride(1) == ej * ek && m.lo[1] == 0 &&
                            static_cast<std::size_t>(m.hi[1]) == ej && m.lo[2] == 0 &&
                            static_cast<std::size_t>(m.hi[2]) == ek;
  for (int v : vars) {
    if (whole_planes) {
      copy(&data(v, m.lo[0], 0, 0), packed, ni * nj * nk);
      packed += ni * nj * nk;
      continue;
    }
    for (int i = m.lo[0]; i < m.hi[0]; ++i)
      for (int j = m.lo[1]; j < m.hi[1]; ++j, packed += nk) {
        if (rows) {
          copy(&data(v, i, j, m.lo[2]), packed, nk);
          continue;
        }
        double* row = packed;
        for (int k = m.lo[2]; k < m.hi[2]; ++k, ++row) {
          if constexpr (ToPacket) {
            *row = data(v, i, j, k);
          } else {
            data(v, i, j, k) = *row;
          }
        }
      }
  }
}

}  // namespace korch::detail
