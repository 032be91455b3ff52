// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro update of a block outside the runtime (the benchmark's plain loops, the tests), and the
// parameters the hydro bundle's actions (hydro_routines.hpp) take: the time step's Euler
// parameters, where the diagnostics and each box's stable dt go.
#pragma once

#include "euler.hpp"

#include <korch/backend/spaces.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/grid.hpp>

namespace korch {
class PacketEntry;
}

namespace korch::hydro {

struct BlockDiagnostics {
  double mass = 0.0, rho_min = 0.0, rho_max = 0.0;
};
// The "diagnostics" action's figures of one packet entry: the sum of its interior's densities
// (variable rho_var) times cell_volume, and their range, by reductions on `space`.
BlockDiagnostics entry_diagnostics(const DeviceTaskSpace& space, const PacketEntry& entry, int rho_var,
                                   double cell_volume);

// The hydro bundle's parameters for one step (routines "hydro" and, for action-parallel, "diagnostics").
struct StepParameters {
  EulerParams euler;
  BlockDiagnostics* diagnostics = nullptr;  // indexed by block id
  double cell_volume = 1.0;
  // Where each task leaves the largest stable dt of the box it wrote (before the CFL factor):
  // [block * tiles_per_block + tile] (tile 0 for whole blocks); null: not wanted.
  double* box_dt = nullptr;
  int tiles_per_block = 1;
  int fail_block = -1;                               // the action throws on this global block (Options::inject_failure)
  DeviceKernel device_kernel = DeviceKernel::faces;  // device packets' kernels (update_pack)
};

// The hydro update of one item (Tile, Block or DataPacket of blocks), usable without the runtime
// (the benchmark's plain loop calls the same kernel through hydro_update_block).
void hydro_update_block(const Grid& grid, int block, const EulerParams& params);
// The same update by the per-cell EulerKernel (what device packets run on CUDA/HIP builds), on the
// host: the tests check that both give the same bits.
void hydro_update_block_per_cell(const Grid& grid, int block, const EulerParams& params);

// The benchmark's plain device reference: the grid's data in one device allocation and the same
// per-block kernel that the device configuration runs on its packets, without the runtime (what a
// hand-written offload does). With `copies`, the whole grid goes host -> device before and device ->
// host after the step; without, the data stays on the device (kernel time alone; the host grid is
// then not updated). Meaningful where device_is_accelerator; elsewhere it runs on the host.
class PlainDeviceStep {
 public:
  explicit PlainDeviceStep(const Grid& grid);
  void operator()(const EulerParams& params, bool copies);

 private:
  const Grid* grid_;
  Kokkos::View<double*, DeviceMemSpace> data_;
};

}  // namespace korch::hydro
