// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "plain_resident_step.hpp"

#include "layout_right_var.hpp"
#include "static_dim.hpp"

#include <korch/backend/cell_range.hpp>
#include <korch/error.hpp>

#include <limits>

namespace korch::hydro {

namespace {

using Cells = Kokkos::View<double*****, Kokkos::LayoutRight, DeviceMemSpace>;

// Captured by device lambdas (std::array's members are not device functions).
Kokkos::Array<int, 3> device_array(const std::array<int, 3>& a) { return {a[0], a[1], a[2]}; }

template <int Dim>
KOKKOS_INLINE_FUNCTION EulerKernel<LayoutRightVar, Dim> block_kernel(const Cells& cells, int b, const EulerParams& p) {
  EulerKernel<LayoutRightVar, Dim> kernel;
  const int nj = static_cast<int>(cells.extent(3)), nk = static_cast<int>(cells.extent(4));
  for (int v = 0; v < n_cons; ++v) {
    kernel.u[v] = LayoutRightVar{&cells(b, p.state + v, 0, 0, 0), nj, nk};
    kernel.unew[v] = LayoutRightVar{&cells(b, p.next_state + v, 0, 0, 0), nj, nk};
  }
  kernel.p = p;
  return kernel;
}

// Every face along D of every block, each once: the face below cell (g + f) of the interior. A
// free function: nvcc takes device lambdas only in accessible functions.
template <int Dim, int D>
void face_fluxes(const Cells& cells, const Kokkos::View<double*****, Kokkos::LayoutRight, DeviceMemSpace>& flux,
                 const Kokkos::Array<int, 3>& g, const EulerParams& p) {
  // A thread per face in a flat range (CellRange: neighbouring threads, neighbouring faces).
  const int extent[3] = {static_cast<int>(flux.extent(2)), static_cast<int>(flux.extent(3)),
                         static_cast<int>(flux.extent(4))};
  const CellRange range(static_cast<int>(flux.extent(0)), extent);
  Kokkos::parallel_for(
      "plain resident hydro fluxes", range.policy(DeviceExecSpace()), KOKKOS_LAMBDA(std::int64_t t) {
        int b, fi, fj, fk;
        range.cell(t, b, fi, fj, fk);
        double F[5];
        block_kernel<Dim>(cells, b, p).template low_face_flux<D>(g[0] + fi, g[1] + fj, g[2] + fk, F);
        for (int v = 0; v < n_cons; ++v) flux(b, v, fi, fj, fk) = F[v];
      });
}

// Every block's interior cells, or with `stored` every cell it stores.
CellRange block_cells(const Cells& cells, const std::array<int, 3>& interior, bool stored = false) {
  const int extent[3] = {stored ? static_cast<int>(cells.extent(2)) : interior[0],
                         stored ? static_cast<int>(cells.extent(3)) : interior[1],
                         stored ? static_cast<int>(cells.extent(4)) : interior[2]};
  return CellRange(static_cast<int>(cells.extent(0)), extent);
}

}  // namespace

PlainResidentStep::PlainResidentStep(const Grid& grid, std::array<BoundaryKind, 3> boundary) : boundary_(boundary) {
  const GridSpec& s = grid.spec();
  if (!s.owned_blocks.empty() && static_cast<int>(s.owned_blocks.size()) != s.blocks[0] * s.blocks[1] * s.blocks[2])
    throw Error("plain resident step: the grid holds some of the blocks only: give it one rank's whole grid");
  if (s.n_vars < n_grid_vars)
    throw Error::format("plain resident step: the grid has {} variables, the hydro step needs {}", s.n_vars,
                        n_grid_vars);
  dim_ = s.guard_dims;
  for (std::size_t d = 0; d < 3; ++d) {
    blocks_[d] = s.blocks[d];
    interior_[d] = s.block_cells[d];
    guard_[d] = static_cast<int>(d) < dim_ ? s.guard : 0;
  }
  const auto host = grid.data();
  cells_ = Cells(Kokkos::view_alloc(Kokkos::WithoutInitializing, "plain resident hydro cells"), host.extent(0),
                 host.extent(1), host.extent(2), host.extent(3), host.extent(4));
  Kokkos::deep_copy(cells_, host);
  for (int d = 0; d < dim_; ++d)
    flux_[d] =
        Faces(Kokkos::view_alloc(Kokkos::WithoutInitializing, "plain resident hydro fluxes"), host.extent(0),
              static_cast<std::size_t>(n_cons), static_cast<std::size_t>(interior_[0] + (d == 0)),
              static_cast<std::size_t>(interior_[1] + (d == 1)), static_cast<std::size_t>(interior_[2] + (d == 2)));
}

double PlainResidentStep::stable_dt(const EulerParams& params) const {
  EulerParams p = params;
  p.state = state_;
  const Cells cells = cells_;
  const auto g = device_array(guard_);
  double dt = std::numeric_limits<double>::infinity();
  const CellRange range = block_cells(cells, interior_);
  Kokkos::parallel_reduce(
      "plain resident hydro dt", range.policy(DeviceExecSpace()),
      KOKKOS_LAMBDA(std::int64_t t, double& m) {
        int b, i, j, k;
        range.cell(t, b, i, j, k);
        double U[5];
        for (int v = 0; v < n_cons; ++v) U[v] = cells(b, p.state + v, g[0] + i, g[1] + j, g[2] + k);
        const double dt_cell = cell_dt(U, p);
        m = dt_cell < m ? dt_cell : m;
      },
      Kokkos::Min<double>(dt));
  return dt;
}

// Each guard cell takes the interior cell of the whole grid at its position, wrapped (periodic)
// or clamped (outflow) into the domain: the rule of korch's exchange (docs/ranks.md).
void PlainResidentStep::fill_guards() const {
  const Cells cells = cells_;
  const auto nb = device_array(blocks_), n = device_array(interior_), g = device_array(guard_);
  const bool periodic[3] = {boundary_[0] == BoundaryKind::periodic, boundary_[1] == BoundaryKind::periodic,
                            boundary_[2] == BoundaryKind::periodic};
  const bool px = periodic[0], py = periodic[1], pz = periodic[2];
  const int first = state_;
  const CellRange range = block_cells(cells, interior_, true);
  Kokkos::parallel_for(
      "plain resident hydro guard fill", range.policy(DeviceExecSpace()), KOKKOS_LAMBDA(std::int64_t t) {
        int b, i, j, k;
        range.cell(t, b, i, j, k);
        const int local[3] = {i, j, k};
        const int index[3] = {b % nb[0], (b / nb[0]) % nb[1], b / (nb[0] * nb[1])};
        const bool wraps[3] = {px, py, pz};
        bool interior = true;
        int src_block[3], src[3];
        for (int d = 0; d < 3; ++d) {
          const int total = nb[d] * n[d];
          int cell = index[d] * n[d] + local[d] - g[d];
          interior = interior && local[d] >= g[d] && local[d] < g[d] + n[d];
          cell = wraps[d] ? ((cell % total) + total) % total : (cell < 0 ? 0 : cell >= total ? total - 1 : cell);
          src_block[d] = cell / n[d];
          src[d] = cell % n[d] + g[d];
        }
        if (interior) return;
        const int from = src_block[0] + nb[0] * (src_block[1] + nb[1] * src_block[2]);
        for (int v = first; v < first + n_cons; ++v) cells(b, v, i, j, k) = cells(from, v, src[0], src[1], src[2]);
      });
}

void PlainResidentStep::update(const EulerParams& params) {
  EulerParams p = params;
  p.state = state_;
  p.next_state = other_set(state_);
  if (p.dim != dim_)
    throw Error::format("plain resident step: the step asks for {} directions, the grid has guard cells along {}",
                        p.dim, dim_);
  with_static_dim(dim_, [&](auto dim) {
    constexpr int Dim = decltype(dim)::value;
    face_fluxes<Dim, 0>(cells_, flux_[0], device_array(guard_), p);
    if constexpr (Dim > 1) face_fluxes<Dim, 1>(cells_, flux_[1], device_array(guard_), p);
    if constexpr (Dim > 2) face_fluxes<Dim, 2>(cells_, flux_[2], device_array(guard_), p);
  });
  const Cells cells = cells_;
  const Faces fx = flux_[0], fy = flux_[1], fz = flux_[2];
  const auto g = device_array(guard_);
  const CellRange range = block_cells(cells, interior_);
  Kokkos::parallel_for(
      "plain resident hydro update", range.policy(DeviceExecSpace()), KOKKOS_LAMBDA(std::int64_t t) {
        int b, i, j, k;
        range.cell(t, b, i, j, k);
        // The fused kernel's sums in its order: direction by direction, high face minus low face.
        double dU[5] = {0, 0, 0, 0, 0};
        for (int d = 0; d < p.dim; ++d) {
          const Faces& f = d == 0 ? fx : d == 1 ? fy : fz;
          const double l = p.dt / p.dx[d];
          for (int v = 0; v < n_cons; ++v)
            dU[v] -= l * (f(b, v, i + (d == 0), j + (d == 1), k + (d == 2)) - f(b, v, i, j, k));
        }
        for (int v = 0; v < n_cons; ++v)
          cells(b, p.next_state + v, g[0] + i, g[1] + j, g[2] + k) =
              cells(b, p.state + v, g[0] + i, g[1] + j, g[2] + k) + dU[v];
      });
  DeviceExecSpace().fence();
  state_ = p.next_state;
}

void PlainResidentStep::copy_to(Grid& grid) const { Kokkos::deep_copy(grid.data(), cells_); }

}  // namespace korch::hydro
