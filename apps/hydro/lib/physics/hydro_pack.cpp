// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "hydro_pack.hpp"

#include "layout_right_var.hpp"
#include "static_dim.hpp"

#include <korch/backend/cell_range.hpp>
#include <korch/error.hpp>
#include <korch/grid.hpp>

#include <algorithm>
#include <limits>

namespace korch::hydro {

namespace {

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

// The largest interior of any entry, per direction: the index space of the kernels, a thread per
// cell (or face) in a flat range (CellRange: neighbouring threads, neighbouring cells).
Kokkos::Array<int, 3> largest_interior(const PacketPack& pack) {
  Kokkos::Array<int, 3> n{0, 0, 0};
  for (int e = 0; e < pack.size(); ++e) {
    const PacketEntryMeta& m = pack.host_entry(e);
    for (int d = 0; d < 3; ++d) n[d] = std::max(n[d], m.interior_hi[d] - m.interior_lo[d]);
  }
  return n;
}

// Every entry's interior cells, or with face_along = D its low faces along D and the last cell's
// high face.
CellRange cells_of(const PacketPack& pack, const Kokkos::Array<int, 3>& n, int face_along = -1) {
  const int extent[3] = {n[0] + (face_along == 0), n[1] + (face_along == 1), n[2] + (face_along == 2)};
  return CellRange(pack.size(), extent);
}

// Entry e's interior cell (or low face along D) c as entry-local indices into x; false where the
// entry's interior is smaller than the range.
KOKKOS_INLINE_FUNCTION bool entry_local(const PacketEntryMeta& m, const int (&c)[3], int D, int (&x)[3]) {
  for (int d = 0; d < 3; ++d) {
    if (c[d] >= m.interior_hi[d] - m.interior_lo[d] + (d == D)) return false;
    x[d] = m.interior_lo[d] - m.lo[d] + c[d];
  }
  return true;
}

// The fused kernel: a thread per cell computes the cell's 2 * Dim face fluxes and its update, and
// in the same pass the smallest stable dt of the new state.
template <int Dim>
double launch_fused_update(const DeviceTaskSpace& space, const EulerParams p, const PacketPack pack,
                           const Kokkos::Array<int, 3> n) {
  const CellRange range = cells_of(pack, n);
  double dt = std::numeric_limits<double>::infinity();
  Kokkos::parallel_reduce(
      "korch hydro update (packet, fused)", range.policy(space),
      KOKKOS_LAMBDA(std::int64_t t, double& m) {
        int e, c[3], x[3];
        range.cell(t, e, c[0], c[1], c[2]);
        if (!entry_local(pack.entry(e), c, -1, x)) return;
        double U[5];
        pack_kernel<Dim>(pack, e, p).update(x[0], x[1], x[2], U);
        const double dt_cell = cell_dt<Dim>(U, p);
        m = dt_cell < m ? dt_cell : m;
      },
      Kokkos::Min<double>(dt));
  return dt;
}

// Every face along D of every entry's interior, each once: the flux through the low face of
// interior cell f (f up to the interior's extent along D: the last cell's high face too) into
// scratch variables D * 5 .. D * 5 + 4 at that cell.
template <int Dim, int D>
void launch_face_fluxes(const DeviceTaskSpace& space, const EulerParams p, const PacketPack pack,
                        const Kokkos::Array<int, 3> n) {
  const CellRange range = cells_of(pack, n, D);
  Kokkos::parallel_for(
      "korch hydro face fluxes (packet)", range.policy(space), KOKKOS_LAMBDA(std::int64_t t) {
        int e, c[3], x[3];
        range.cell(t, e, c[0], c[1], c[2]);
        if (!entry_local(pack.entry(e), c, D, x)) return;
        double F[5];
        pack_kernel<Dim>(pack, e, p).template low_face_flux<D>(x[0], x[1], x[2], F);
        for (int v = 0; v < n_cons; ++v) pack.scratch(e, D * n_cons + v, x[0], x[1], x[2]) = F[v];
      });
}

// The update of every interior cell from the face fluxes in scratch, in the fused kernel's order
// (direction by direction, high face minus low face: the same bits), and the smallest stable dt of
// the new state in the same pass.
template <int Dim>
double launch_update_from_fluxes(const DeviceTaskSpace& space, const EulerParams p, const PacketPack pack,
                                 const Kokkos::Array<int, 3> n) {
  const CellRange range = cells_of(pack, n);
  double dt = std::numeric_limits<double>::infinity();
  Kokkos::parallel_reduce(
      "korch hydro update (packet, from face fluxes)", range.policy(space),
      KOKKOS_LAMBDA(std::int64_t t, double& m) {
        int e, c[3], x[3];
        range.cell(t, e, c[0], c[1], c[2]);
        if (!entry_local(pack.entry(e), c, -1, x)) return;
        const int i = x[0], j = x[1], k = x[2];
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
        const double dt_cell = cell_dt<Dim>(U, p);
        m = dt_cell < m ? dt_cell : m;
      },
      Kokkos::Min<double>(dt));
  return dt;
}

// The staged kernels' scratch variables after the face fluxes (variables 0 .. Dim * 5 - 1): each
// cell's Hancock-predicted state, its limited slope along every direction, and whether it is at a
// strong shock (1 or 0).
template <int Dim>
struct StagedScratch {
  static constexpr int predicted = Dim * n_cons;
  static constexpr int slopes = predicted + n_cons;  // slope d of variable v: slopes + d * 5 + v
  static constexpr int shock = slopes + Dim * n_cons;
  static constexpr int count = shock + 1;
};

// Entry e's cell c of its interior grown by one cell along each of the Dim directions, as
// entry-local indices x; false outside that box, and for the cells that lie beyond the interior
// along two directions or more (no interior face has them as a neighbour).
template <int Dim>
KOKKOS_INLINE_FUNCTION bool entry_local_grown(const PacketEntryMeta& m, const int (&c)[3], int (&x)[3]) {
  int beyond = 0;
  for (int d = 0; d < 3; ++d) {
    const int grow = d < Dim;
    const int n = m.interior_hi[d] - m.interior_lo[d];
    if (c[d] >= n + 2 * grow) return false;
    beyond += grow & static_cast<int>(c[d] == 0 || c[d] == n + 1);
    x[d] = m.interior_lo[d] - m.lo[d] + c[d] - grow;
  }
  return beyond <= 1;
}

// The staged kernels' first pass: every cell that a face of an entry's interior lies on (the
// interior and the layer around it) predicts its half-step state and slopes once, from one load of
// itself and its face neighbours, into StagedScratch.
template <int Dim>
void launch_predictions(const DeviceTaskSpace& space, const EulerParams p, const PacketPack pack,
                        const Kokkos::Array<int, 3> n) {
  const int extent[3] = {n[0] + 2, n[1] + (Dim > 1 ? 2 : 0), n[2] + (Dim > 2 ? 2 : 0)};
  const CellRange range(pack.size(), extent);
  using Staged = StagedScratch<Dim>;
  Kokkos::parallel_for(
      "korch hydro predictions (packet, staged)", range.policy(space), KOKKOS_LAMBDA(std::int64_t t) {
        int e, c[3], x[3];
        range.cell(t, e, c[0], c[1], c[2]);
        if (!entry_local_grown<Dim>(pack.entry(e), c, x)) return;
        double Wh[5], S[3][5];
        const bool shock = pack_kernel<Dim>(pack, e, p).predict_with_shock(x[0], x[1], x[2], Wh, S);
        for (int v = 0; v < n_cons; ++v) pack.scratch(e, Staged::predicted + v, x[0], x[1], x[2]) = Wh[v];
        KORCH_DIRECTIONS_UNROLL
        for (int d = 0; d < Dim; ++d)
          for (int v = 0; v < n_cons; ++v) pack.scratch(e, Staged::slopes + d * n_cons + v, x[0], x[1], x[2]) = S[d][v];
        pack.scratch(e, Staged::shock, x[0], x[1], x[2]) = shock ? 1.0 : 0.0;
      });
}

// The staged kernels' face fluxes along D: launch_face_fluxes' flux from the two cells' predictions
// in scratch, by the same arithmetic as EulerKernel::low_face_flux.
template <int Dim, int D>
void launch_staged_face_fluxes(const DeviceTaskSpace& space, const EulerParams p, const PacketPack pack,
                               const Kokkos::Array<int, 3> n) {
  const CellRange range = cells_of(pack, n, D);
  using Staged = StagedScratch<Dim>;
  Kokkos::parallel_for(
      "korch hydro face fluxes (packet, staged)", range.policy(space), KOKKOS_LAMBDA(std::int64_t t) {
        int e, c[3], x[3];
        range.cell(t, e, c[0], c[1], c[2]);
        if (!entry_local(pack.entry(e), c, D, x)) return;
        const int i = x[0], j = x[1], k = x[2];
        const int il = i - (D == 0), jl = j - (D == 1), kl = k - (D == 2);
        double L[5], R[5], F[5];
        for (int v = 0; v < n_cons; ++v) {
          const int slope = Staged::slopes + D * n_cons + v;
          L[v] = pack.scratch(e, Staged::predicted + v, il, jl, kl) + 0.5 * pack.scratch(e, slope, il, jl, kl);
          R[v] = pack.scratch(e, Staged::predicted + v, i, j, k) - 0.5 * pack.scratch(e, slope, i, j, k);
        }
        const bool shock =
            pack.scratch(e, Staged::shock, i, j, k) != 0.0 || pack.scratch(e, Staged::shock, il, jl, kl) != 0.0;
        face_flux(L, R, D, p.gamma, shock, F);
        for (int v = 0; v < n_cons; ++v) pack.scratch(e, D * n_cons + v, i, j, k) = F[v];
      });
}

template <int Dim>
double launch_update(const DeviceTaskSpace& space, const StepParameters& P, const PacketPack& pack,
                     DeviceKernel kernel) {
  const Kokkos::Array<int, 3> n = largest_interior(pack);
  if (kernel == DeviceKernel::fused) return launch_fused_update<Dim>(space, P.euler, pack, n);
  if (kernel == DeviceKernel::staged) {
    launch_predictions<Dim>(space, P.euler, pack, n);
    launch_staged_face_fluxes<Dim, 0>(space, P.euler, pack, n);
    if constexpr (Dim > 1) launch_staged_face_fluxes<Dim, 1>(space, P.euler, pack, n);
    if constexpr (Dim > 2) launch_staged_face_fluxes<Dim, 2>(space, P.euler, pack, n);
  } else {
    launch_face_fluxes<Dim, 0>(space, P.euler, pack, n);
    if constexpr (Dim > 1) launch_face_fluxes<Dim, 1>(space, P.euler, pack, n);
    if constexpr (Dim > 2) launch_face_fluxes<Dim, 2>(space, P.euler, pack, n);
  }
  return launch_update_from_fluxes<Dim>(space, P.euler, pack, n);
}

// The kernels a packet with `scratch` scratch variables runs when `wanted` are asked for: those,
// or the next ones that need fewer (staged, faces, fused).
DeviceKernel kernel_with_room(DeviceKernel wanted, int scratch, int dim) {
  if (wanted == DeviceKernel::staged && scratch < kernel_scratch(DeviceKernel::staged, dim))
    wanted = DeviceKernel::faces;
  if (wanted == DeviceKernel::faces && scratch < kernel_scratch(DeviceKernel::faces, dim)) wanted = DeviceKernel::fused;
  return wanted;
}

}  // namespace

int kernel_scratch(DeviceKernel kernel, int dim) {
  switch (kernel) {
    case DeviceKernel::faces: return dim * n_cons;
    case DeviceKernel::staged:
      return with_static_dim(dim, [](auto d) { return StagedScratch<decltype(d)::value>::count; });
    case DeviceKernel::fused: break;
  }
  return 0;
}

DeviceKernel update_pack(const DeviceTaskSpace& space, const StepParameters& P, const PacketPack& pack) {
  const DeviceKernel kernel = kernel_with_room(P.device_kernel, pack.scratch_count(), P.euler.dim);
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
