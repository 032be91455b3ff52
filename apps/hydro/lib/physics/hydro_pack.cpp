// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "hydro_pack.hpp"

#include "layout_right_var.hpp"

#include <korch/error.hpp>
#include <korch/grid.hpp>

#include <limits>

namespace korch::hydro {

namespace {

KOKKOS_INLINE_FUNCTION LayoutRightVar pack_var(const PacketPack& pack, int e, int var) {
  const PacketEntryMeta& m = pack.entry(e);
  return LayoutRightVar{&pack(e, var, 0, 0, 0), m.hi[1] - m.lo[1], m.hi[2] - m.lo[2]};
}

// The update of a packet's cells and, in the same pass, the smallest stable dt of their new state:
// the cells are read once where a separate dt kernel would read the new state again.
double launch_update(const DeviceTaskSpace& space, const EulerParams p, const PacketPack pack) {
  double dt = std::numeric_limits<double>::infinity();
  Kokkos::parallel_reduce(
      "korch hydro update (packet)", pack.policy(space),
      KOKKOS_LAMBDA(int e, int i, int j, int k, double& m) {
        if (!pack.updates(e, i, j, k)) return;
        EulerKernel<LayoutRightVar> kernel;
        for (int v = 0; v < n_cons; ++v) {
          kernel.u[v] = pack_var(pack, e, p.state + v);
          kernel.unew[v] = pack_var(pack, e, p.next_state + v);
        }
        kernel.p = p;
        double U[5];
        kernel.update(i, j, k, U);
        const double t = cell_dt(U, p);
        m = t < m ? t : m;
      },
      Kokkos::Min<double>(dt));
  return dt;
}

}  // namespace

void update_pack(const DeviceTaskSpace& space, const StepParameters& P, const PacketPack& pack) {
  if (pack.size() == 0) return;
  const auto& grid = as_grid(pack.source());
  for (int e = 0; e < pack.size(); ++e)
    if (P.fail_block >= 0 && grid.block(pack.host_entry(e).block).global_id == P.fail_block)
      throw Error::format("injected failure (--inject-failure {})", P.fail_block);
  const double dt = launch_update(space, P.euler, pack);
  space.fence();
  // The step's dt is the smallest over every slot: the packet's goes to its first block's.
  if (P.box_dt)
    P.box_dt[static_cast<std::size_t>(pack.host_entry(0).block) * static_cast<std::size_t>(P.tiles_per_block)] = dt;
}

}  // namespace korch::hydro
