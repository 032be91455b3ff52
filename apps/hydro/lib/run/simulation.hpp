// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro main job: problem set-up (options: options.hpp) and the step loop whose hydro update runs as a bundle
// through korch::Runtime::execute on the chosen configuration, on every MPI rank for the blocks the
// rank owns (docs/ranks.md). The guard-cell fill runs inside the cycle (GuardCellIterator hands
// each block to the distributor once its guard cells are valid), the next time step comes out of
// the cycle (each task reduces the box it wrote) and the new state is not copied: the two state
// sets swap roles.
//
// Grid variables: two sets of the conserved state (rho, mx, my, mz, E), 0..4 and 5..9; a step
// reads the current set (guard cells filled) and writes the other (interior only). The
// configurations (--config) are the built-ins that configuration_names.hpp names, edited for these
// variables by runtime_configuration.hpp.
#pragma once

#include "euler.hpp"
#include "hydro_update.hpp"
#include "options.hpp"
#include "runtime_configuration.hpp"

#include <korch/backend/spaces.hpp>
#include <korch/communicator.hpp>
#include <korch/configuration.hpp>
#include <korch/decomposition.hpp>
#include <korch/grid.hpp>
#include <korch/guard_cell_iterator.hpp>
#include <korch/recent_cycles.hpp>
#include <korch/runtime.hpp>
#include <korch/trace.hpp>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace korch::hydro {

class HydroOperation;

// Wall time of the steps by phase: the cycle (guard fill included), what follows it on the main
// thread (combining the tasks' dt over blocks and ranks, the swap), the conduction solve.
struct PhaseTimes {
  double execute = 0, dt = 0, conduction = 0;
};

class Simulation {
 public:
  explicit Simulation(Options options);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  const Options& options() const noexcept { return options_; }
  // The ranks of the run and which blocks each owns; grid() holds this rank's blocks.
  const Communicator& communicator() const noexcept { return comm_; }
  const Decomposition& decomposition() const noexcept { return *decomposition_; }
  Grid& grid() noexcept { return *grid_; }
  const Grid& grid() const noexcept { return *grid_; }
  Runtime& runtime() noexcept { return *runtime_; }
  // The configuration of the next step (its packet variables follow the current state set).
  const Configuration& configuration() const noexcept { return configurations_[state_ == 0 ? 0 : 1]; }
  // Switches the configuration for the following steps; the benchmark interleaves configurations
  // on one Runtime with it.
  void set_configuration(HydroConfiguration configuration);
  // Switches the device packets' kernels (Options::device_kernel) for the following steps.
  void set_device_kernel(DeviceKernel kernel);
  double time() const noexcept { return time_; }
  int steps_done() const noexcept { return steps_; }
  std::array<int, 3> global_cells() const noexcept;
  std::array<double, 3> dx() const noexcept;
  EulerParams euler_params(double dt) const;

  // Largest stable dt (CFL number times the minimum over every rank's cells) of the current state,
  // a Kokkos reduction and an allreduce. step() needs it only for the first step (and after
  // conduction): later ones take the dt their previous cycle reduced.
  double stable_dt() const;
  // One step: the hydro bundle through the runtime (guard-cell fill inside), then the swap of the
  // state sets (+ conduction). Returns the dt used (the stable dt, clipped to `dt_max`). With
  // options().operation the step runs from the plan of that operation instead (simulation_plan.cpp).
  double step(double dt_max = 1e300);
  // Switches the following steps to the plan of this operation file ("builtin": the compiled-in
  // one), or back to the hand-bundled step (""); the benchmark alternates both on one Runtime.
  // An operation planned before on this Simulation comes back as planned then (its file is not
  // read again). Throws korch::Error as the constructor does for options().operation.
  void set_operation(const std::string& operation);
  // The planned operation that steps run from; null for the hand-bundled step.
  const HydroOperation* operation() const noexcept { return operation_.get(); }
  // Runs to options().steps or tmax; progress on stdout unless quiet (progress.hpp). Checks first
  // that options().out can be written (when write_output), throwing korch::Error naming it. Writes
  // a checkpoint every options().checkpoint_every steps, and after SIGINT or SIGTERM (when
  // catch_stop_signals() was called) a final one, then throws Interrupted.
  void run();
  // Writes the state to a checkpoint file (checkpoint.hpp); collective, rank 0 writes. Defined with
  // restore() in simulation_checkpoint.cpp.
  void write_checkpoint(const std::string& path) const;
  std::string checkpoint_path() const;

  // Interior of conserved variable `var` (0..4 of the current state) over the whole grid, x
  // fastest: i + nx * (j + ny * k). Collective: every rank calls it and gets the whole field.
  std::vector<double> gather(int var) const;
  // Sum over interior cells of the conserved variables times the cell volume: per block, then the
  // blocks in global order, so that the figures do not depend on the number of ranks. Collective.
  std::array<double, 5> totals() const;
  // A hash of the current state's interior bits, each value mixed with its place in the whole grid
  // and summed: equal for equal states whatever the number of ranks and the size of the blocks.
  // Collective.
  std::uint64_t state_hash() const;
  // First variable of the current state (0 or var_new).
  int state() const noexcept { return state_; }
  // What a step without the runtime does around its update (the benchmark's plain loop): fill the
  // current state's guard cells (every rank), then, after the update, swap the state sets.
  void fill_guards();
  void swap_state();

  const std::vector<BlockDiagnostics>& diagnostics() const noexcept { return diagnostics_; }
  const PhaseTimes& phase_times() const noexcept { return phases_; }
  // Task time per action/step name summed over all traced cycles (seconds).
  const std::map<std::string, double>& action_seconds() const noexcept { return action_seconds_; }
  // Events of the last options().trace_cycles cycles (this rank's).
  std::vector<TraceEvent> last_events() const;
  // Every rank's last events on rank 0's clock, each with its rank (TraceEvent::process):
  // korch::merge_over_ranks. Collective.
  std::vector<TraceEvent> all_ranks_events() const;
  // Bytes moved between host and device memory: the packets' copies, and on a resident grid what
  // it copied back to the host and what device guard fills staged (docs/residency.md).
  double transfer_bytes() const noexcept { return transfer_bytes_; }
  // Of these, the grid's state (blocks' variables) moved in either direction; on a non-resident
  // grid every packet's copies.
  double state_bytes() const noexcept { return state_bytes_; }
  // Of these, what the device guard fills staged (guard cells between host and device blocks, halo
  // messages of device blocks), and what outputs brought back between steps (pictures, plot files,
  // checkpoints, hashes, totals).
  double halo_bytes() const noexcept { return halo_bytes_; }
  double output_bytes() const noexcept { return output_bytes_; }
  std::size_t transfer_events() const noexcept { return transfer_events_; }
  // Transfer time and the part of it during which some task computed, over all traced cycles.
  const TransferOverlap& transfer_overlap() const noexcept { return overlap_; }
  // The same for the guard-cell messages of this rank (from posting to the last one unpacked).
  const TransferOverlap& communication_overlap() const noexcept { return comm_overlap_; }
  double run_seconds() const noexcept { return run_seconds_; }

  // The summary table (cells/s, time per step, shares, transfers, the conserved totals and the
  // state hash). Collective: every rank calls it; rank 0 prints it.
  std::string summary() const;
  // density.png, trace.json, timeline.png under options().out, each written to a temporary name and
  // renamed over the final one (output_files.hpp); defined in simulation_outputs.cpp.
  void write_outputs() const;

 private:
  // The phases of a step (step() and plan_step() read as them).
  // The step's dt: the stable dt (or the last cycle's), clipped to dt_max.
  double time_step(double dt_max);
  // The hand-bundled step's bundle through the runtime, guard-cell fill inside.
  void execute_hydro_bundle(double dt);
  StepParameters step_parameters(double dt);
  // Bytes the last cycle moved to and from device pipelines.
  void count_transfer_bytes();
  void count_output_bytes();
  void trace_step_bytes(double state, double halo);
  std::string transfer_summary() const;
  // The state set the cycle wrote becomes the current one, with the dt its tasks reduced.
  void take_written_state();
  // Conduction on the current state's energy, when --conduction asks for it.
  void conduction_phase(double dt);
  void advance_clock(double dt);
  double plan_step(double dt_max);
  // A step's cycle (or plan), timed and, when outputs are written, traced.
  void traced_cycle(const std::function<void()>& cycle);
  // The one place the current state set changes to the other.
  void flip_state() noexcept { state_ = other_set(state_); }
  double cell_volume() const noexcept;
  // Conduction on the energy of state set `set` (0 or var_new).
  void conduct_step(double dt, int set);
  // The plan of the operation in `file` ("builtin"), with this Simulation's hooks.
  std::unique_ptr<HydroOperation> make_operation(const std::string& file);
  std::vector<double> gather_set(int set, int var) const;
  // The run's configuration in the summary and pictures: --config, or the plan.
  std::string configuration_label() const;
  // The trace of one step: attached before its cycles, its events kept after them.
  bool begin_trace();
  void end_trace();
  void restore(const std::string& checkpoint);
  double cycle_dt(int written);
  // Throws korch::Error naming the first cell of state set `set` (over every rank; collective)
  // that is not physical, and `when` ("after step 12 ...").
  [[noreturn]] void stop_unphysical(int set, const std::string& when) const;

  Options options_;
  Communicator comm_;
  std::unique_ptr<Decomposition> decomposition_;
  std::unique_ptr<Grid> grid_;
  std::unique_ptr<GuardCellExchange> exchange_;
  std::unique_ptr<GuardCellIterator> blocks_when_ready_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<HydroOperation> operation_;                       // the plan steps run from (options_.operation)
  std::map<std::string, std::unique_ptr<HydroOperation>> planned_;  // the others set_operation made, by file
  Configuration configurations_[2];                                 // for the current state in 0..4, and in 5..9
  int state_ = 0;
  int first_step_ = 0;          // steps_ when run() began (a restart continues a count)
  std::vector<double> box_dt_;  // per tile slot, written by the cycle's tasks
  double next_dt_ = 0.0;        // the cycle's stable dt before the CFL factor; 0: not known
  Boundary boundary_ = Boundary::outflow;
  double time_ = 0.0;
  int steps_ = 0;
  std::vector<BlockDiagnostics> diagnostics_;
  std::array<double, 5> initial_totals_{};
  PhaseTimes phases_;
  Trace trace_;
  RecentCycles recent_;  // the last options().trace_cycles traced cycles
  std::map<std::string, double> action_seconds_;
  double transfer_bytes_ = 0.0;
  double state_bytes_ = 0.0;
  double halo_bytes_ = 0.0;
  double output_bytes_ = 0.0;
  double step_output_bytes_ = 0.0;          // what the outputs before this step read
  TransferBytes grid_moved_, fills_moved_;  // the totals counted so far
  // A resident grid's host copy after each step (DeviceResidency::host_bytes_kept).
  std::size_t host_copy_kept_ = 0;
  int steps_without_host_copy_ = 0;
  std::size_t transfer_events_ = 0;
  TransferOverlap overlap_;
  TransferOverlap comm_overlap_;  // guard-cell messages in flight and the tasks that hid them
  double run_seconds_ = 0.0;
  // run()'s steps: the first (pools, copy lists and the state's first upload to a device) apart
  // from the later ones, whose time the summary's rate is made of; outputs are in neither.
  double first_step_seconds_ = 0.0;
  double later_steps_seconds_ = 0.0;
};

}  // namespace korch::hydro
