// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro update of one box: the device path (EulerKernel over an MDRange) and the host path
// (the host sweep, euler_host_sweep.hpp: bitwise the same results), the plain loops the benchmarks
// compare against, and the action routines that run them on tiles, blocks and packets.
#include "hydro_routines.hpp"
#include "euler_host_sweep.hpp"
#include "host_cells.hpp"
#include "hydro_pack.hpp"
#include "hydro_update.hpp"
#include "static_dim.hpp"

#include <korch/backend/cell_range.hpp>
#include <korch/data_packet.hpp>
#include <korch/error.hpp>
#include <korch/typed_action.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace korch::hydro {

namespace {

template <int Dim, class Space, class View>
void launch_with_dim(const Space& space, const View (&vars)[n_grid_vars], const EulerParams& p, const int lo[3],
                     const int hi[3]) {
  EulerKernel<View, Dim> k;
  for (int v = 0; v < n_cons; ++v) {
    k.u[v] = vars[p.state + v];
    k.unew[v] = vars[p.next_state + v];
  }
  k.p = p;
  Kokkos::parallel_for("korch hydro update", cell_policy<3>(space, {lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}), k);
}

template <class Space, class View>
void launch(const Space& space, const View (&vars)[n_grid_vars], const EulerParams& p, const int lo[3],
            const int hi[3]) {
  with_static_dim(p.dim, [&](auto dim) { launch_with_dim<decltype(dim)::value>(space, vars, p, lo, hi); });
}

// A packet entry: on host-only builds the "device" is host memory, so the host version runs there
// too (same bits); on CUDA/HIP builds the per-cell EulerKernel runs on the thread's stream.
template <class Space, class View>
void update_packet_entry(const Space& space, const View (&vars)[n_grid_vars], const EulerParams& p, const int lo[3],
                         const int hi[3]) {
  if constexpr (std::is_same_v<View, HostVar>) {
    (void)space;
    update_box_host(vars, p, lo, hi);
  } else {
    launch(space, vars, p, lo, hi);
  }
}

// The same on a packet entry's device variables, on the thread's instance (a named function:
// its KOKKOS_LAMBDA must be a valid extended lambda on CUDA).
[[maybe_unused]] double box_dt_device(const DeviceTaskSpace& space, const DataPacket::DeviceVar (&vars)[n_grid_vars],
                                      const EulerParams& p, const int lo[3], const int hi[3]) {
  DataPacket::DeviceVar U0 = vars[p.next_state], U1 = vars[p.next_state + 1], U2 = vars[p.next_state + 2],
                        U3 = vars[p.next_state + 3], U4 = vars[p.next_state + 4];
  double m = 0;
  Kokkos::parallel_reduce(
      "korch hydro box dt", cell_policy<3>(space, {lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}),
      KOKKOS_LAMBDA(int i, int j, int k, double& lo_dt) {
        const double U[5] = {U0(i, j, k), U1(i, j, k), U2(i, j, k), U3(i, j, k), U4(i, j, k)};
        const double t = cell_dt(U, p);
        lo_dt = t < lo_dt ? t : lo_dt;
      },
      Kokkos::Min<double>(m));
  space.fence();
  return m;
}

template <class Space, class View>
double box_dt(const Space& space, const View (&vars)[n_grid_vars], const EulerParams& p, const int lo[3],
              const int hi[3]) {
  if constexpr (std::is_same_v<View, HostVar>) {
    (void)space;
    return box_dt_host(vars, p, lo, hi);
  } else {
    return box_dt_device(space, vars, p, lo, hi);
  }
}

void check_injected_failure(const StepParameters& P, const Grid& grid, int block) {
  if (P.fail_block >= 0 && grid.block(block).global_id == P.fail_block)
    throw Error::format("injected failure (--inject-failure {})", P.fail_block);
}

void record_dt(const StepParameters& P, int block, int tile, double dt) {
  if (P.box_dt)
    P.box_dt[static_cast<std::size_t>(block) * static_cast<std::size_t>(P.tiles_per_block) +
             static_cast<std::size_t>(tile)] = dt;
}

}  // namespace

void hydro_update_block(const Grid& grid, int block, const EulerParams& params) {
  HostVar vars[n_grid_vars];
  for (int v = 0; v < n_grid_vars; ++v) vars[v] = host_var(grid, block, v);
  const Box& bx = grid.block(block).interior;
  update_box_host(vars, params, bx.lo.data(), bx.hi.data());
}

void hydro_update_block_per_cell(const Grid& grid, int block, const EulerParams& params) {
  HostVar vars[n_grid_vars];
  for (int v = 0; v < n_grid_vars; ++v) vars[v] = host_var(grid, block, v);
  const Box& bx = grid.block(block).interior;
  const auto space = compat::calling_thread_instance();
  launch(space, vars, params, bx.lo.data(), bx.hi.data());
  space.fence();
}

PlainDeviceStep::PlainDeviceStep(const Grid& grid)
    : grid_(&grid),
      data_(Kokkos::view_alloc(Kokkos::WithoutInitializing, "korch hydro plain device grid"),
            static_cast<std::size_t>(grid.n_blocks()) * grid.doubles_per_block()) {
  Kokkos::deep_copy(data_, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                               grid.block_pointer(0), data_.extent(0)));
}

void PlainDeviceStep::operator()(const EulerParams& params, bool copies) {
  const Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(grid_->block_pointer(0),
                                                                                               data_.extent(0));
  const DeviceExecSpace space;
  if (copies) Kokkos::deep_copy(space, data_, host);
  const auto e = grid_->stored_extent();
  const std::size_t cells = static_cast<std::size_t>(e[0]) * e[1] * e[2];
  for (const auto& m : grid_->blocks()) {
    DataPacket::DeviceVar vars[n_grid_vars];
    for (int v = 0; v < n_grid_vars; ++v) {
      vars[v] = DataPacket::DeviceVar(data_.data() + static_cast<std::size_t>(m.id) * grid_->doubles_per_block() +
                                          static_cast<std::size_t>(v) * cells,
                                      e[0], e[1], e[2]);
    }
    update_packet_entry(space, vars, params, m.interior.lo.data(), m.interior.hi.data());
  }
  if (copies) Kokkos::deep_copy(space, host, data_);
  space.fence();
}

namespace {

// The hydro update of a tile, a block or a packet entry, whichever memory its Views are in: the
// host version on host memory, EulerKernel on the device (update_packet_entry).
template <class BoxView>
void update_box(const StepParameters& P, const BoxView& box) {
  check_injected_failure(P, box.grid(), box.block_id());
  typename BoxView::var_type vars[n_grid_vars];
  for (int v = 0; v < n_grid_vars; ++v) vars[v] = box.var(v);
  update_packet_entry(box.space(), vars, P.euler, box.lo(), box.hi());
  if (P.box_dt)
    record_dt(P, box.block_id(), std::max(box.tile_index(), 0), box_dt(box.space(), vars, P.euler, box.lo(), box.hi()));
}

}  // namespace

ActionRoutine hydro_routine() {
  // The solver runs on korch::Grid only: its kernels are written for the grid's and the packets'
  // LayoutRight Views, not for another source's strided ones.
  const auto update = [](const ActionContext& ctx, const auto& box) {
    update_box(ctx.parameters_as<StepParameters>(), box);
  };
  TypedAction action("hydro");
  action.reads_guard_cells().on_grid_box(update).on_packet_box(update);
  // On a GPU a packet is one launch over all its blocks; host builds keep the host sweep per entry.
  if constexpr (device_is_accelerator)
    action.on_packet([](const ActionContext& ctx, const PacketPack& pack) {
      update_pack(ctx.device_space(), ctx.parameters_as<StepParameters>(), pack);
    });
  return action.routine();
}

namespace {

// Sum, min and max of a density array over a box (scalar reductions on the thread's instance; a
// named function, not a lambda, so that its KOKKOS_LAMBDAs are valid extended lambdas on CUDA).
void density_stats(const DeviceTaskSpace& space, const DataPacket::DeviceVar rho, const int lo3[3], const int hi3[3],
                   double& sum, double& lo, double& hi) {
  const auto policy = cell_policy<3>(space, {lo3[0], lo3[1], lo3[2]}, {hi3[0], hi3[1], hi3[2]});
  Kokkos::parallel_reduce(
      "korch hydro mass", policy, KOKKOS_LAMBDA(int i, int j, int k, double& s) { s += rho(i, j, k); },
      Kokkos::Sum<double>(sum));
  Kokkos::parallel_reduce(
      "korch hydro rho min", policy,
      KOKKOS_LAMBDA(int i, int j, int k, double& s) { s = rho(i, j, k) < s ? rho(i, j, k) : s; },
      Kokkos::Min<double>(lo));
  Kokkos::parallel_reduce(
      "korch hydro rho max", policy,
      KOKKOS_LAMBDA(int i, int j, int k, double& s) { s = rho(i, j, k) > s ? rho(i, j, k) : s; },
      Kokkos::Max<double>(hi));
  space.fence();
}

}  // namespace

BlockDiagnostics entry_diagnostics(const DeviceTaskSpace& space, const PacketEntry& entry, int rho_var,
                                   double cell_volume) {
  double sum = 0, lo = 0, hi = 0;
  density_stats(space, entry.var(rho_var), entry.interior().lo.data(), entry.interior().hi.data(), sum, lo, hi);
  return BlockDiagnostics{sum * cell_volume, lo, hi};
}

ActionRoutine diagnostics_routine() {
  return TypedAction("diagnostics")
      .on_packet_entry([](const ActionContext& ctx, const PacketEntry& entry) {
        const auto& P = ctx.parameters_as<StepParameters>();
        P.diagnostics[entry.block_id()] = entry_diagnostics(ctx.device_space(), entry, P.euler.state, P.cell_volume);
      })
      .routine();
}

}  // namespace korch::hydro
