// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro main job on an adaptive mesh (korch-hydro --max-level N; docs/adaptive-mesh.md, "The
// hydro job"). The mesh is a korch::ForestMesh over --blocks root blocks per direction, each block
// --cells-per-block cells per direction whatever its level, shared among the ranks along the Morton
// curve. A step: the guard cells of every leaf (same-level copies, restriction, prolongation), the
// hydro action through Runtime::execute on the chosen configuration over this rank's leaves (each
// with its level's cell size), the fluxes at level jumps corrected so that the totals change only
// through the domain's edges, the state sets swapped. Every --regrid-every steps the mesh follows
// the flow (Löhner's estimator on density and energy). All leaves take the same time step, the
// finest level's.
#pragma once

#include "euler.hpp"
#include "hydro_update.hpp"
#include "options.hpp"

#include <korch/communicator.hpp>
#include <korch/configuration.hpp>
#include <korch/forest_mesh.hpp>
#include <korch/runtime.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace korch::hydro {

struct CheckpointContent;

// Wall time of the steps by phase (seconds, this rank).
struct AmrPhaseTimes {
  double guard_fill = 0, execute = 0, flux_correction = 0, time_step = 0, regrid = 0, conduction = 0;
  double total() const noexcept { return guard_fill + execute + flux_correction + time_step + regrid + conduction; }
};

struct AmrStepParameters;
class ConductionOperator;
class HydroOperation;

class AmrSimulation {
 public:
  // Builds the mesh, refines it around the initial state (one regrid per level) and sets the
  // initial state; with options().restart, the checkpoint's mesh and state instead. Collective over the ranks of
  // `comm`. Throws korch::Error for options without levels (use Simulation) and as validate() does.
  explicit AmrSimulation(Options options, const Communicator& comm = Communicator::world());
  ~AmrSimulation();
  AmrSimulation(const AmrSimulation&) = delete;
  AmrSimulation& operator=(const AmrSimulation&) = delete;

  const Options& options() const noexcept { return options_; }
  const ForestMesh& mesh() const noexcept { return *mesh_; }
  const Communicator& communicator() const noexcept { return comm_; }
  double time() const noexcept { return time_; }
  int steps_done() const noexcept { return steps_; }
  int state() const noexcept { return state_; }  // first variable of the current state set

  // One step of at most dt_max; returns the dt taken. Collective. With `estimate`, the step also
  // finds each leaf's refinement estimate of the state it reads, for regrid_on_step_estimates().
  double step(double dt_max = 1e300, bool estimate = false);
  // Regrids the mesh now on the current state's estimates (a fill cycle finds them); what changed.
  // Collective.
  RegridCounts regrid();
  // Regrids the mesh on the estimates the last step found of the state it read (step(dt, true)):
  // no fill cycle of its own. Collective; throws korch::Error if the last step found none.
  RegridCounts regrid_on_step_estimates();
  // To options().steps or the end time, regridding after every options().regrid_every-th step on
  // the estimates that step found (docs/adaptive-mesh.md, "The hydro job"), with a
  // progress report unless quiet. Collective. After SIGINT or SIGTERM (catch_stop_signals) every
  // rank stops after the same step and throws Interrupted (checkpoint.hpp).
  void run();

  // The conserved totals (each variable times the cell volume, summed per leaf and then over the
  // leaves in Morton order: the same figures on any number of ranks). Collective.
  std::array<double, 5> totals() const;
  // A hash of the leaves (their keys) and the current state's interior bits, in Morton order:
  // equal for equal meshes and states whatever the number of ranks. Collective.
  std::uint64_t state_hash() const;
  // Leaves of each level, 0 .. max_level.
  std::vector<int> leaves_per_level() const;
  // Cell updates so far (every leaf's cells, every step).
  double cell_updates() const noexcept { return cell_updates_; }
  const AmrPhaseTimes& phase_times() const noexcept { return phases_; }
  // Each of this rank's leaves' stable dt (before the CFL factor) for the current state, that the
  // next step takes its time step from; empty where the next step works them out afresh.
  std::vector<double> leaf_dts() const { return block_dt_valid_ ? block_dt_ : std::vector<double>{}; }
  // On cpu_gpu_action_parallel (the device team's) and with --plan (the plan's "diagnostics"): the
  // figures of the state the last step read, over every rank's leaves (mass summed in Morton order,
  // the density's range). Collective. Throws korch::Error on other configurations or before the
  // first step.
  BlockDiagnostics diagnostics() const;

  // A checkpoint of the mesh and the current state at `path` (checkpoint.hpp); rank 0 writes.
  // Collective.
  void write_checkpoint(const std::string& path) const;
  // options().out/checkpoint.bin: where --checkpoint-every and a stop signal write.
  std::string checkpoint_path() const;
  // The summary table; collective, meaningful on rank 0.
  std::string summary() const;
  // density.png under options().out: the density on the finest level's cells (2D; the mid plane
  // in 3D) with each leaf's outline in its level's colour. Collective; rank 0 writes.
  void write_outputs() const;
  // The density of the current state on the finest level's lattice of the picture's plane (x
  // fastest; each leaf's cell repeated over the finest cells it covers). Collective.
  std::vector<double> density_on_finest_lattice() const;

 private:
  EulerParams params(double dt) const;
  void fail_on_leaf(AmrStepParameters& step) const;  // --inject-failure
  // The current state's guard cells: the other ranks' leaves, then a cycle of the leaves' fills,
  // which may also find each block's stable dt (block_dt_) and its refinement estimate
  // (block_estimate_, with regrid_'s variables).
  void fill_guard_cells(bool find_dt, bool find_estimates);
  // regrid_'s variables: the density and the energy of the current state.
  void set_estimate_vars();
  // The stable dt of the blocks' dts from the last fill that found them, over every rank.
  double stable_dt() const;
  // The fluxes the last update used at level jumps (a cycle over the blocks), then the correction.
  void correct_fluxes(const EulerParams& p);
  // The hydro cycle of step dt: on the host configuration fused with the guard fill and, into
  // next_block_dt_, the time step of the state it writes (unless `guards_filled`).
  // With `estimate`, each leaf's refinement estimate of the state it reads, into block_estimate_.
  void update(const EulerParams& p, bool guards_filled, bool estimate);
  // After the correction: the stable dt of the cells it changed (beside finer leaves), into
  // next_block_dt_, which the fused step left without them.
  void add_corrected_dts(const EulerParams& p);
  // --conduction: one implicit step of dt on the current state's temperature over every leaf's
  // cells, composite across levels (forest_conduction.hpp); the next step finds its time step afresh.
  void conduct(double dt);
  // --plan / --operation: the step's operation planned for this run's runtime, on the leaves.
  std::unique_ptr<HydroOperation> make_operation();
  // The mesh and state of checkpoint `path` (options().restart), in place of the initial ones.
  void restore(const std::string& path);
  void rebuild_tree(const CheckpointContent& content, const std::string& path);

  Options options_;
  Communicator comm_;
  std::unique_ptr<ForestMesh> mesh_;
  std::unique_ptr<Runtime> runtime_;
  Configuration configurations_[2];                  // for the current state in 0..4, and in 5..9
  Configuration fill_configuration_;                 // the guard fill's cycle: cpu_only with the run's threads
  Configuration flux_configuration_;                 // the same for recording the fluxes at level jumps
  std::vector<double> block_dt_;                     // per block, for the current state
  std::vector<double> next_block_dt_;                // per block, for the state the fused step writes
  bool block_dt_valid_ = false;                      // block_dt_ holds the current state's on this mesh
  bool fused_ = false;                               // fill and time step inside the hydro cycle
  bool guards_filled_ = false;                       // the current state's guard cells are valid
  std::vector<double> block_estimate_;               // per block, its refinement estimate
  bool estimates_valid_ = false;                     // block_estimate_ holds the last step's, on this mesh
  std::vector<unsigned char> faces_recorded_;        // per block: its update recorded its level-jump fluxes
  std::vector<BlockDiagnostics> diagnostics_;        // per block of the last step (action-parallel)
  std::vector<std::atomic<std::int64_t>> block_ns_;  // per block: update time since the last regrid (--balance cost)
  std::int64_t migrated_ = 0;                        // leaves moved between ranks by rebalances
  RegridOptions regrid_;
  std::unique_ptr<HydroOperation> operation_;       // --plan: the update runs from its plan
  std::unique_ptr<ConductionOperator> conduction_;  // for conduction_leaves_
  std::vector<BlockKey> conduction_leaves_;
  int state_ = 0;
  double time_ = 0;
  int steps_ = 0;
  int regrids_ = 0;
  double cell_updates_ = 0;
  double run_seconds_ = 0;
  std::array<double, 5> initial_totals_{};
  AmrPhaseTimes phases_;
};

}  // namespace korch::hydro
