// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// PacketPack: every entry of a data packet on the device at once, for one kernel over the whole
// packet (entries x cells) instead of one launch per entry (docs/typed-actions.md, "Packs"). It is
// a small value that kernels capture by copy; its reads go to the packet's own device buffer, whose
// metadata section already holds each entry's box and device addresses.
//
//   template <class Space> void double_all(const Space& space, const korch::PacketPack& p) {
//     Kokkos::parallel_for(p.policy(space), KOKKOS_LAMBDA(int e, int i, int j, int k) {
//       if (p.updates(e, i, j, k)) p(e, 1, i, j, k) = 2.0 * p(e, 0, i, j, k);
//     });
//   }
//   korch::TypedAction("double").on_packet(
//       [](const korch::ActionContext& ctx, const korch::PacketPack& p) { double_all(ctx.device_space(), p); });
//
// Indices are entry-local, as in PacketEntry: (0, 0, 0) is the first cell the packet stores of the
// entry. policy() spans the largest entry; updates() and stores() say which indices an entry has.
#pragma once

#include <korch/backend/cell_range.hpp>
#include <korch/data_packet.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>

namespace korch {

class PacketPack {
 public:
  static constexpr int max_variables = 64;

  // The packet must be on the device; throws korch::Error otherwise, or when the source has more
  // variables, or face variables, than max_variables.
  explicit PacketPack(const DataPacket& packet);

  KOKKOS_INLINE_FUNCTION int size() const noexcept { return n_entries_; }
  KOKKOS_INLINE_FUNCTION const PacketEntryMeta& entry(int e) const noexcept { return entries_[e]; }
  // Whether the packet carries variable `var` (copy-in, copy-in-out or copy-out). Check it on the
  // host: a kernel reading a variable the packet does not carry reads nothing meaningful.
  bool carries(int var) const noexcept { return var >= 0 && var < max_variables && place_[var] >= 0; }
  // The largest stored extent of any entry in direction d.
  int extent(int d) const noexcept { return extent_[d]; }
  // On the host: entry e's metadata (its block id, box, level), and the source its blocks belong to.
  const PacketEntryMeta& host_entry(int e) const noexcept { return host_entries_[e]; }
  const DataSource& source() const noexcept { return *source_; }

  // (entry, i, j, k) over every entry and the largest entry's stored cells, on `space`: k runs
  // fastest, and on a GPU a warp's threads take neighbouring cells (cell_policy).
  template <class Space>
  CellPolicy<4, Space> policy(const Space& space) const {
    return cell_policy<4>(space, {0, 0, 0, 0}, {n_entries_, extent_[0], extent_[1], extent_[2]});
  }

  // Whether entry e stores cell (i, j, k), and whether the cell is one the action updates (the
  // block's interior, or the tile's box).
  KOKKOS_INLINE_FUNCTION bool stores(int e, int i, int j, int k) const noexcept {
    const PacketEntryMeta& m = entries_[e];
    return i < m.hi[0] - m.lo[0] && j < m.hi[1] - m.lo[1] && k < m.hi[2] - m.lo[2];
  }
  KOKKOS_INLINE_FUNCTION bool updates(int e, int i, int j, int k) const noexcept {
    const PacketEntryMeta& m = entries_[e];
    return i >= m.interior_lo[0] - m.lo[0] && i < m.interior_hi[0] - m.lo[0] && j >= m.interior_lo[1] - m.lo[1] &&
           j < m.interior_hi[1] - m.lo[1] && k >= m.interior_lo[2] - m.lo[2] && k < m.interior_hi[2] - m.lo[2];
  }

  // Face variables (docs/data-packets.md, "Face variables"): whether the packet carries face
  // variable `var` (check it on the host), a policy (entry, i, j, k) over every entry's faces
  // across any axis (the largest entry's stored cells plus one in each direction), whether entry e
  // has face (i, j, k) across `axis`, and whether that face bounds a cell the action updates.
  bool carries_face(int var) const noexcept { return var >= 0 && var < max_variables && face_place_[var] >= 0; }
  template <class Space>
  CellPolicy<4, Space> face_policy(const Space& space) const {
    return cell_policy<4>(space, {0, 0, 0, 0}, {n_entries_, extent_[0] + 1, extent_[1] + 1, extent_[2] + 1});
  }
  KOKKOS_INLINE_FUNCTION bool stores_face(int e, int axis, int i, int j, int k) const noexcept {
    const PacketEntryMeta& m = entries_[e];
    const int at[3] = {i, j, k};
    if (m.face_offset[axis] < 0) return false;
    for (int d = 0; d < 3; ++d)
      if (at[d] < 0 || at[d] >= m.hi[d] - m.lo[d] + (d == axis ? 1 : 0)) return false;
    return true;
  }
  KOKKOS_INLINE_FUNCTION bool bounds_update(int e, int axis, int i, int j, int k) const noexcept {
    const PacketEntryMeta& m = entries_[e];
    const int at[3] = {i, j, k};
    if (m.face_offset[axis] < 0) return false;
    for (int d = 0; d < 3; ++d)
      if (at[d] < m.interior_lo[d] - m.lo[d] || at[d] >= m.interior_hi[d] - m.lo[d] + (d == axis ? 1 : 0)) return false;
    return true;
  }
  // Face variable `var` of entry e across `axis` at entry-local face (i, j, k): face i is the low
  // face of cell i.
  KOKKOS_INLINE_FUNCTION double& face(int e, int axis, int var, int i, int j, int k) const noexcept {
    const PacketEntryMeta& m = entries_[e];
    const int place = face_place_[var];
    const std::size_t nj = static_cast<std::size_t>(m.hi[1] - m.lo[1] + (axis == 1 ? 1 : 0));
    const std::size_t nk = static_cast<std::size_t>(m.hi[2] - m.lo[2] + (axis == 2 ? 1 : 0));
    double* const data = reinterpret_cast<double*>(m.face_address[place / slot_range]) +
                         static_cast<std::int64_t>(place % slot_range) * m.face_stride + m.face_offset[axis];
    return data[(static_cast<std::size_t>(i) * nj + static_cast<std::size_t>(j)) * nk + static_cast<std::size_t>(k)];
  }

  // Scratch variables (PacketVariables::scratch: device memory of the packet's own, never copied):
  // how many each entry has (check it on the host), and scratch variable `s` of entry e at
  // entry-local (i, j, k), over the same stored box as the entry's variables.
  int scratch_count() const noexcept { return n_scratch_; }
  KOKKOS_INLINE_FUNCTION double& scratch(int e, int s, int i, int j, int k) const noexcept {
    const PacketEntryMeta& m = entries_[e];
    const std::size_t nj = static_cast<std::size_t>(m.hi[1] - m.lo[1]);
    const std::size_t nk = static_cast<std::size_t>(m.hi[2] - m.lo[2]);
    double* const data = reinterpret_cast<double*>(m.device_address[3]) + static_cast<std::int64_t>(s) * m.n_cells;
    return data[(static_cast<std::size_t>(i) * nj + static_cast<std::size_t>(j)) * nk + static_cast<std::size_t>(k)];
  }

  // Variable `var` of entry e at entry-local (i, j, k).
  KOKKOS_INLINE_FUNCTION double& operator()(int e, int var, int i, int j, int k) const noexcept {
    const PacketEntryMeta& m = entries_[e];
    const int place = place_[var];
    const std::size_t nj = static_cast<std::size_t>(m.hi[1] - m.lo[1]);
    const std::size_t nk = static_cast<std::size_t>(m.hi[2] - m.lo[2]);
    double* const data = reinterpret_cast<double*>(m.device_address[place / slot_range]) +
                         static_cast<std::int64_t>(place % slot_range) * m.var_stride;
    return data[(static_cast<std::size_t>(i) * nj + static_cast<std::size_t>(j)) * nk + static_cast<std::size_t>(k)];
  }

 private:
  static constexpr int slot_range = 1 << 16;  // place = section * slot_range + slot
  const PacketEntryMeta* entries_;            // the packet's metadata section, in device memory
  const PacketEntryMeta* host_entries_;       // the same on the host
  const DataSource* source_;
  int n_entries_;
  int n_scratch_;
  int extent_[3];
  Kokkos::Array<int, max_variables> place_;       // per variable; -1: not carried
  Kokkos::Array<int, max_variables> face_place_;  // per face variable; -1: not carried
};

}  // namespace korch
