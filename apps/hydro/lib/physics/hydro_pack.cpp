// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "hydro_pack.hpp"

#include "layout_right_var.hpp"
#include "static_dim.hpp"

#include <korch/error.hpp>
#include <korch/grid.hpp>

#include <algorithm>
#include <limits>

namespace korch::hydro {

namespace {

using Policy4 = Kokkos::MDRangePolicy<DeviceTaskSpace, Kokkos::Rank<4>>;

KOKKOS_INLINE_FUNCTION LayoutRightVar pack_var(const PacketPack& pack, int e, int var) {
  const PacketEntryMeta& m = pack.entry(e);
  return LayoutRightVar{&pack(e, var, 0, 0, 0), m.hi[1] - m.lo[1], m.hi[2] - m.lo[2]};
}

template <int Dim>
KOKKOS_INLINE_FUNCTION EulerKernel<LayoutRightVar, Dim> pack_kernel(const PacketPack& pack, int e,
                                                                    const EulerParams& p) {
  EulerKernel<LayoutRightVar, Dim> kernel;
  for (int v = 0; v < n_cons; ++v) {
    kernel.u[v] = pack_var(pack, e, p.state + v);
    kernel.unew[v] = pack_var(pack, e, p.next_state + v);
  }
  kernel.p = p;
  return kernel;
}

// The fused kernel: a thread per cell computes the cell's 2 * Dim face fluxes and its update, and
// in the same pass the smallest stable dt of the new state.
template <int Dim>
double launch_fused_update(const DeviceTaskSpace& space, const EulerParams p, const PacketPack pack) {
  double dt = std::numeric_limits<double>::infinity();
  Kokkos::parallel_reduce(
      "korch hydro update (packet, fused)", pack.policy(space),
      KOKKOS_LAMBDA(int e, int i, int j, int k, double& m) {
        if (!pack.updates(e, i, j, k)) return;
        double U[5];
        pack_kernel<Dim>(pack, e, p).update(i, j, k, U);
        const double t = cell_dt<Dim>(U, p);
        m = t < m ? t : m;
      },
      Kokkos::Min<double>(dt));
  return dt;
}

// The largest interior of any entry, per direction: the index space of the face-flux kernels.
Kokkos::Array<int, 3> largest_interior(const PacketPack& pack) {
  Kokkos::Array<int, 3> n{0, 0, 0};
  for (int e = 0; e < pack.size(); ++e) {
    const PacketEntryMeta& m = pack.host_entry(e);
    for (int d = 0; d < 3; ++d) n[d] = std::max(n[d], m.interior_hi[d] - m.interior_lo[d]);
  }
  return n;
}

// Every face along D of every entry's interior, each once: the flux through the low face of
// interior cell f (f up to the interior's extent along D: the last cell's high face too) into
// scratch variables D * 5 .. D * 5 + 4 at that cell.
template <int Dim, int D>
void launch_face_fluxes(const DeviceTaskSpace& space, const EulerParams p, const PacketPack pack,
                        const Kokkos::Array<int, 3> n) {
  Kokkos::parallel_for(
      "korch hydro face fluxes (packet)",
      Policy4(space, {0, 0, 0, 0}, {pack.size(), n[0] + (D == 0), n[1] + (D == 1), n[2] + (D == 2)}),
      KOKKOS_LAMBDA(int e, int fi, int fj, int fk) {
        const PacketEntryMeta& m = pack.entry(e);
        const int f[3] = {fi, fj, fk};
        for (int d = 0; d < 3; ++d)
          if (f[d] > m.interior_hi[d] - m.interior_lo[d] - (d == D ? 0 : 1)) return;
        const int i = m.interior_lo[0] - m.lo[0] + fi, j = m.interior_lo[1] - m.lo[1] + fj,
                  k = m.interior_lo[2] - m.lo[2] + fk;
        double F[5];
        pack_kernel<Dim>(pack, e, p).template low_face_flux<D>(i, j, k, F);
        for (int v = 0; v < n_cons; ++v) pack.scratch(e, D * n_cons + v, i, j, k) = F[v];
      });
}

// The update of every interior cell from the face fluxes in scratch, in the fused kernel's order
// (direction by direction, high face minus low face: the same bits), and the smallest stable dt of
// the new state in the same pass.
template <int Dim>
double launch_update_from_fluxes(const DeviceTaskSpace& space, const EulerParams p, const PacketPack pack,
                                 const Kokkos::Array<int, 3> n) {
  double dt = std::numeric_limits<double>::infinity();
  Kokkos::parallel_reduce(
      "korch hydro update (packet, from face fluxes)", Policy4(space, {0, 0, 0, 0}, {pack.size(), n[0], n[1], n[2]}),
      KOKKOS_LAMBDA(int e, int ci, int cj, int ck, double& m) {
        const PacketEntryMeta& me = pack.entry(e);
        if (ci >= me.interior_hi[0] - me.interior_lo[0] || cj >= me.interior_hi[1] - me.interior_lo[1] ||
            ck >= me.interior_hi[2] - me.interior_lo[2])
          return;
        const int i = me.interior_lo[0] - me.lo[0] + ci, j = me.interior_lo[1] - me.lo[1] + cj,
                  k = me.interior_lo[2] - me.lo[2] + ck;
        double dU[5] = {0, 0, 0, 0, 0};
        for (int d = 0; d < Dim; ++d) {
          const int di = d == 0, dj = d == 1, dk = d == 2;
          const double l = p.dt / p.dx[d];
          for (int v = 0; v < n_cons; ++v)
            dU[v] -= l * (pack.scratch(e, d * n_cons + v, i + di, j + dj, k + dk) -
                          pack.scratch(e, d * n_cons + v, i, j, k));
        }
        double U[5];
        for (int v = 0; v < n_cons; ++v) {
          U[v] = pack(e, p.state + v, i, j, k) + dU[v];
          pack(e, p.next_state + v, i, j, k) = U[v];
        }
        const double t = cell_dt<Dim>(U, p);
        m = t < m ? t : m;
      },
      Kokkos::Min<double>(dt));
  return dt;
}

template <int Dim>
double launch_update(const DeviceTaskSpace& space, const StepParameters& P, const PacketPack& pack,
                     DeviceKernel kernel) {
  if (kernel == DeviceKernel::fused) return launch_fused_update<Dim>(space, P.euler, pack);
  const Kokkos::Array<int, 3> n = largest_interior(pack);
  launch_face_fluxes<Dim, 0>(space, P.euler, pack, n);
  if constexpr (Dim > 1) launch_face_fluxes<Dim, 1>(space, P.euler, pack, n);
  if constexpr (Dim > 2) launch_face_fluxes<Dim, 2>(space, P.euler, pack, n);
  return launch_update_from_fluxes<Dim>(space, P.euler, pack, n);
}

}  // namespace

int face_flux_scratch(int dim) { return dim * n_cons; }

DeviceKernel update_pack(const DeviceTaskSpace& space, const StepParameters& P, const PacketPack& pack) {
  const DeviceKernel kernel =
      pack.scratch_count() < face_flux_scratch(P.euler.dim) ? DeviceKernel::fused : P.device_kernel;
  if (pack.size() == 0) return kernel;
  const auto& grid = as_grid(pack.source());
  for (int e = 0; e < pack.size(); ++e)
    if (P.fail_block >= 0 && grid.block(pack.host_entry(e).block).global_id == P.fail_block)
      throw Error::format("injected failure (--inject-failure {})", P.fail_block);
  const double dt = with_static_dim(
      P.euler.dim, [&](auto dim) { return launch_update<decltype(dim)::value>(space, P, pack, kernel); });
  space.fence();
  // The step's dt is the smallest over every slot: the packet's goes to its first block's.
  if (P.box_dt)
    P.box_dt[static_cast<std::size_t>(pack.host_entry(0).block) * static_cast<std::size_t>(P.tiles_per_block)] = dt;
  return kernel;
}

}  // namespace korch::hydro
