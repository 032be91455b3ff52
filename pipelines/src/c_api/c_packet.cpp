// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// C and Fortran routines on data packets (docs/c-api.md, "Built-in configurations"). A packet stores
// each variable of each entry as its own LayoutRight (i, j, k) array; a C or Fortran routine expects
// the block as the code laid it out at korch_blocks_add. So each entry is copied into a buffer with
// the block's own extents and strides, the routine runs on it, and what the packet copies back to
// the host (copy-in-out and copy-out variables) is copied into the packet again. Cells the entry
// does not hold (the guard cells of a tile's entry) and variables the packet does not carry are NaN.
// Where the packet already stores the entry in that layout (a C-ordered block whose variables it all
// carries, one after the other), the routine gets the packet's memory itself and nothing is copied.
// Only memory the host can read can be given to a routine: on a GPU build packets live in device
// memory, and such configurations are refused before the cycle starts (check_c_routines).
#include "c_item.hpp"

#include <korch/action_context.hpp>
#include <korch/backend/spaces.hpp>
#include <korch/data_packet.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

namespace korch::c_api {

namespace {

constexpr bool device_readable_by_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, DeviceMemSpace>::accessible;

// The three helpers below serve host-readable packets only: [[maybe_unused]] where packets lie in
// device memory and the branch that calls them is discarded.

// The number of doubles a block's layout spans (from its first element to its last).
[[maybe_unused]] std::size_t span_of(const BlockView& v) {
  std::size_t last = 0;
  for (int r = 0; r < 4; ++r) {
    if (v.extent(static_cast<unsigned>(r)) == 0) return 0;
    last += (v.extent(static_cast<unsigned>(r)) - 1) * v.stride(static_cast<unsigned>(r));
  }
  return last + 1;
}

// Copies variable `var` of an entry between the packet's array (entry-local LayoutRight over `e`,
// the entry's box or its faces across one axis) and the block-shaped buffer `view` (block-local
// indices).
[[maybe_unused]] void copy_entry_var(const Box& e, double* packed, const BlockView& view, int var, bool into_view) {
  const int n1 = e.hi[1] - e.lo[1], n2 = e.hi[2] - e.lo[2];
  for (int i = e.lo[0]; i < e.hi[0]; ++i)
    for (int j = e.lo[1]; j < e.hi[1]; ++j)
      for (int k = e.lo[2]; k < e.hi[2]; ++k) {
        double& p = packed[(static_cast<std::size_t>(i - e.lo[0]) * n1 + (j - e.lo[1])) * n2 + (k - e.lo[2])];
        double& b = view(var, i, j, k);
        if (into_view) {
          b = p;
        } else {
          p = b;
        }
      }
}

[[maybe_unused]] Box stored_box(const PacketEntryMeta& e) {
  Box box;
  for (int d = 0; d < 3; ++d) {
    box.lo[d] = e.lo[d];
    box.hi[d] = e.hi[d];
  }
  return box;
}

// Whether a variable in this section goes back to the host.
[[maybe_unused]] bool written(int section) {
  return section == static_cast<int>(PacketSection::copy_in_out) ||
         section == static_cast<int>(PacketSection::copy_out);
}

// The face variables a packet carries of one entry, copied into buffers laid out as the code's own
// face arrays of the block (NaN where the packet holds nothing), and back after the routine.
struct EntryFaces {
  EntryFaces(const DataPacket& p, std::size_t n) : packet(p), entry(n) {
    const DataSource& source = packet.source();
    const PacketEntryMeta& e = packet.entry(n);
    for (int a = 0; a < 3 && source.n_face_vars() > 0; ++a) {
      if (!has_faces_across(source.block(e.block), a)) continue;
      const BlockView own = source.face_view(e.block, a);
      auto& buffer = buffers[static_cast<std::size_t>(a)];
      buffer.assign(span_of(own), std::numeric_limits<double>::quiet_NaN());
      views[a] = BlockView(buffer.data(), own.layout());
      for (int v = 0; v < source.n_face_vars(); ++v)
        if (packet.carries_face(v))
          copy_entry_var(face_box(stored_box(e), a), packet.device_face(n, a, v).data(), views[a], v, true);
    }
  }
  void copy_back() const {
    const PacketEntryMeta& e = packet.entry(entry);
    for (int a = 0; a < 3; ++a)
      for (int v = 0; v < packet.source().n_face_vars() && views[a].data() != nullptr; ++v)
        if (written(packet.face_place(v).first))
          copy_entry_var(face_box(stored_box(e), a), packet.device_face(entry, a, v).data(), views[a], v, false);
  }
  const DataPacket& packet;
  std::size_t entry;
  std::array<std::vector<double>, 3> buffers;
  BlockView views[3];
};

// The entry's own memory in the packet, when the packet stores it as the block's own layout: a whole
// block whose every variable the packet carries one after the other at the block's variable stride,
// each a LayoutRight (i, j, k) array as in a C-ordered block. Null otherwise.
[[maybe_unused]] double* in_place(const DataPacket& packet, std::size_t n, const BlockView& own) {
  if (packet.data_type() != DataType::packet_of_blocks) return nullptr;
  const PacketEntryMeta& e = packet.entry(n);
  const std::size_t n0 = static_cast<std::size_t>(e.hi[0] - e.lo[0]), n1 = static_cast<std::size_t>(e.hi[1] - e.lo[1]),
                    n2 = static_cast<std::size_t>(e.hi[2] - e.lo[2]);
  if (own.extent(1) != n0 || own.extent(2) != n1 || own.extent(3) != n2) return nullptr;
  if (own.stride(3) != 1 || own.stride(2) != n2 || own.stride(1) != n1 * n2) return nullptr;
  double* first = nullptr;
  for (int v = 0; v < packet.source().n_vars(); ++v) {
    if (packet.variable_place(v).first < 0) return nullptr;
    double* p = packet.device_var(n, v).data();
    if (v == 0) first = p;
    if (p != first + static_cast<std::size_t>(v) * own.stride(0)) return nullptr;
  }
  return first;
}

}  // namespace

void run_on_packet(const std::string& name, korch_action_fn function, void* user, const ActionContext& ctx,
                   DataPacket& packet) {
  if constexpr (!device_readable_by_host) {
    throw Error::format(
        "action '{}' is a C or Fortran routine, but {} lies in device memory, which the host cannot read: run it "
        "on a configuration whose team for '{}' takes tiles or blocks (e.g. cpu_only)",
        excerpt(name), packet.describe(), excerpt(name));
  } else {
    ctx.device_space().fence();  // whatever the thread's instance still copies into the packet
    thread_local std::vector<double> buffer;
    const DataSource& source = packet.source();
    for (std::size_t n = 0; n < packet.size(); ++n) {
      const PacketEntryMeta& e = packet.entry(n);
      const Box stored = stored_box(e);
      const BlockView own = source.block_view(e.block);
      double* const packed = in_place(packet, n, own);
      if (packed == nullptr) buffer.assign(span_of(own), std::numeric_limits<double>::quiet_NaN());
      const BlockView view(packed != nullptr ? packed : buffer.data(), own.layout());
      for (int v = 0; v < source.n_vars() && packed == nullptr; ++v)
        if (packet.variable_place(v).first >= 0) copy_entry_var(stored, packet.device_var(n, v).data(), view, v, true);
      EntryFaces faces(packet, n);
      Box box;
      for (int d = 0; d < 3; ++d) {
        box.lo[d] = e.interior_lo[d];
        box.hi[d] = e.interior_hi[d];
      }
      const korch_item item = describe(source, e.block, e.tile, box, view, faces.views);
      call_routine(name, function, user, item, view.data(),
                   packet.describe() + (e.tile < 0 ? ", block " : ", a tile of block ") + std::to_string(e.block));
      for (int v = 0; v < source.n_vars() && packed == nullptr; ++v)
        if (written(packet.variable_place(v).first))
          copy_entry_var(stored, packet.device_var(n, v).data(), view, v, false);
      faces.copy_back();
    }
  }
}

void check_c_routines(const Configuration& configuration, const Bundle& bundle) {
  for (const TeamConfig& team : configuration.teams) {
    if (bundle.find(team.action) == nullptr) continue;
    if (team.type == DataType::action_metadata)
      throw Error::format(
          "configuration '{}' hands action '{}' of team '{}' only each block's metadata (action_metadata), for a "
          "routine that finds the data on the device itself; a C or Fortran routine needs the block's cells: use "
          "cpu_only, gpu_only or cpu_gpu_data_parallel",
          excerpt(configuration.name), excerpt(team.action), excerpt(team.name));
    if (is_packet(team.type) && !device_readable_by_host)
      throw Error::format(
          "configuration '{}' gives action '{}' of team '{}' packets in device memory ({}), which a C or Fortran "
          "routine on the host cannot read: use cpu_only, or write '{}' in C++ (korch::TypedAction)",
          excerpt(configuration.name), excerpt(team.action), excerpt(team.name), DeviceMemSpace::name(),
          excerpt(team.action));
  }
}

}  // namespace korch::c_api
