// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Euler scheme on an adaptive mesh (korch::ForestMesh, docs/adaptive-mesh.md): the update
// action for any box of the mesh's leaves (tiles, blocks, packet entries), the fluxes through the
// leaves' faces that the correction at level jumps needs, the stable time step over the leaves,
// and the problems' initial states as averages over the finest cells.
//
// The mesh holds both state sets, variables 0..4 and 5..9, as korch::Grid does for the uniform
// run (EulerParams::state, next_state). Each box updates with its own level's cell size.
#pragma once

#include "euler.hpp"
#include "hydro_update.hpp"
#include "options.hpp"

#include <korch/action_routine.hpp>
#include <korch/forest_mesh.hpp>

#include <atomic>
#include <cstdint>

namespace korch::hydro {

// The "hydro" action on a ForestMesh's leaves (dx ignored: each box takes its block's cell size).
// A box that is a whole leaf in host memory also records the fluxes through its faces at level jumps
// (as record_face_fluxes does) and marks its block in `faces_recorded` (one flag per block).
// The fused step, on host teams that hand out whole leaves (docs/adaptive-mesh.md, "The hydro
// job"): with fill_var >= 0 each leaf first fills its own guard cells of the set at fill_var (after
// ForestMesh::exchange_ghost_leaves, or as ForestFillIterator hands it out), and with block_dt it
// leaves there the largest stable dt of the set it wrote, except the cells beside faces shared with
// finer leaves (the flux correction changes them; the caller adds them afterwards,
// amr_face_cells_dt; one slot per block); with block_estimate, each leaf's refinement estimate of
// the set it reads; a box that is not a whole host leaf is an error.
struct AmrStepParameters {
  EulerParams euler;
  ForestMesh* mesh = nullptr;
  unsigned char* faces_recorded = nullptr;
  int fill_var = -1;
  double* block_dt = nullptr;
  // Per block: nanoseconds its update took, added to (the regrid's measured cost); null: not timed.
  std::atomic<std::int64_t>* block_ns = nullptr;
  // Per block: its refinement estimate (ForestMesh::regrid_estimate with `regrid`) of the state the
  // update reads; null: none.
  double* block_estimate = nullptr;
  const RegridOptions* regrid = nullptr;
  // Per block: what the "diagnostics" action (amr_diagnostics_routine) finds; null: not run.
  BlockDiagnostics* diagnostics = nullptr;
  int fail_block = -1;  // the action throws on this block (Options::inject_failure)
  int fail_leaf = -1;   // its place on the Morton curve, for the message
};
ActionRoutine amr_hydro_routine();
// The same update of cells [lo, hi) of leaf `block` (guard cells counted), not fused: what the
// planner's "hydro_update" runs on an item of the mesh's leaves. Timed into step.block_ns when set.
void amr_update_leaf_box(const AmrStepParameters& step, int block, const int* lo, const int* hi);
// A whole leaf's mass (its cells' sum of variable rho_var times its level's cell volume) and
// density range, on the host.
BlockDiagnostics amr_leaf_diagnostics(const ForestMesh& mesh, int block, int rho_var);
// The action-parallel configuration's second action, on the device team's packets beside the host
// team's update: each leaf's mass (with its level's cell volume) and density range of the state the
// update reads, into AmrStepParameters::diagnostics.
ActionRoutine amr_diagnostics_routine();

// The guard fill of the state set that starts at `first_var`, spread over a runtime cycle's threads
// (after ForestMesh::exchange_ghost_leaves, or as ForestFillIterator hands them out): the
// "guard_fill" action, each block filling its own. With `block_dt` (one slot per block), each block
// also puts there the largest stable dt of its interior cells of that set (amr_leaf_dt), so the
// step's time step needs no pass of its own; with `block_estimate`, what `regrid` needs of its
// refinement estimate (ForestMesh::regrid_estimate).
struct AmrFillParameters {
  const ForestMesh* mesh = nullptr;
  int first_var = 0;
  double* block_dt = nullptr;
  EulerParams dt_params;  // gamma and dim for block_dt
  double* block_estimate = nullptr;
  const RegridOptions* regrid = nullptr;
};
ActionRoutine amr_guard_fill_routine();

// After the update of `p`: the fluxes it used through the faces of this rank's leaves at level
// jumps (those ForestMesh::correct_fluxes reads), into mesh.face_flux at variables p.next_state ..
// + 4 (the current set's are zero). Needs the current state's guard cells as the update read them.
// The "face_fluxes" action does it per block, spread over a cycle's threads.
void record_face_fluxes(ForestMesh& mesh, const EulerParams& p, int block);
// Blocks flagged in `faces_recorded` are skipped: their update recorded them.
struct AmrFluxParameters {
  ForestMesh* mesh = nullptr;
  EulerParams params;
  const unsigned char* faces_recorded = nullptr;
};
ActionRoutine amr_face_flux_routine();

// The largest stable dt of one leaf's interior cells of state p.state (before the CFL factor), with
// its level's cell size; unphysical_dt when a cell is not physical.
double amr_leaf_dt(const ForestMesh& mesh, int block, const EulerParams& p);
// The same over the leaf's interior cells beside one face (side 0: low, 1: high, of `axis`).
double amr_face_cells_dt(const ForestMesh& mesh, int block, const EulerParams& p, int axis, int side);
// The smallest of the blocks' dts (amr_leaf_dt, one per block of this rank). Throws korch::Error
// naming the first cell that is not physical.
double amr_stable_dt(const ForestMesh& mesh, const std::vector<double>& block_dt, const EulerParams& p);

// Both state sets of every leaf of this rank (interior cells) to the problem's initial state, each
// cell the mean over the finest level's cells it covers (Sedov's deposit: the finest cells within
// 3.5 finest cell widths of the centre, the energy shared equally among them).
void set_amr_initial_state(ForestMesh& mesh, const Options& options);

}  // namespace korch::hydro
