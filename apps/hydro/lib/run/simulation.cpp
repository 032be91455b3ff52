// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Simulation's set-up, its step as a sequence of phases, the time-step reductions and the run
// loop (simulation.hpp). Pictures and summary: simulation_outputs.cpp, simulation_figures.cpp;
// checkpoints: simulation_checkpoint.cpp; steps from a plan: simulation_plan.cpp.
#include "simulation.hpp"

#include "host_cells.hpp"
#include "hydro_operation.hpp"
#include "hydro_routines.hpp"

#include "checkpoint.hpp"
#include "checkpoint_after_step.hpp"
#include "initial_state.hpp"
#include "physical_state.hpp"
#include "plot_writer.hpp"
#include "progress.hpp"
#if __has_include("conduction.hpp")
#include "conduction.hpp"
#define KORCH_HYDRO_HAVE_CONDUCTION 1
#endif

#include <korch/block.hpp>
#include <korch/bundle.hpp>
#include <korch/data_packet.hpp>
#include <korch/error.hpp>
#include <korch/grid_residency.hpp>
#include <korch/output_files.hpp>
#include <korch/tile.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <type_traits>

namespace korch::hydro {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

Simulation::Simulation(Options options)
    : options_(std::move(options)), comm_(Communicator::world()), recent_(options_.trace_cycles) {
  validate(options_);
  const Options& o = options_;
  boundary_ = o.boundary ? *o.boundary : (o.problem == Problem::wave ? Boundary::periodic : Boundary::outflow);
  GridSpec spec;
  spec.block_cells = {o.cells_per_block, o.cells_per_block, o.dim == 3 ? o.cells_per_block : 1};
  spec.blocks = {o.blocks, o.blocks, o.dim == 3 ? o.blocks : 1};
  spec.guard = guard_cells;
  spec.guard_dims = o.dim;  // a 2-D grid stores no z guard planes
  spec.n_vars = n_grid_vars;
  spec.domain_lo = {0.0, 0.0, 0.0};
  spec.domain_hi = {1.0, 1.0, o.dim == 3 ? 1.0 : 1.0 / (static_cast<double>(o.blocks) * o.cells_per_block)};
  spec.tile_cells = {o.tile, o.tile, o.dim == 3 ? o.tile : 0};
  // Configurations with device packets keep the blocks on the device between steps.
  spec.resident = o.config != HydroConfiguration::cpu;
  check_grid_size(spec, 0);  // the whole grid's index limits first: their error names the sizes
  decomposition_ = std::make_unique<Decomposition>(spec.blocks, comm_.size());
  spec.owned_blocks = decomposition_->blocks_of(comm_.rank());
  grid_ = std::make_unique<Grid>(spec);
  const BoundaryKind edge = boundary_ == Boundary::periodic ? BoundaryKind::periodic : BoundaryKind::outflow;
  exchange_ = std::make_unique<GuardCellExchange>(*grid_, *decomposition_,
                                                  std::array<BoundaryKind, 3>{edge, edge, edge}, comm_);
  blocks_when_ready_ = std::make_unique<GuardCellIterator>(*exchange_, state_, n_cons);
  configurations_[0] = make_configuration(o, 0, comm_.size());
  configurations_[1] = make_configuration(o, var_new, comm_.size());
  runtime_ = std::make_unique<Runtime>(runtime_options(o));
  diagnostics_.assign(static_cast<std::size_t>(grid_->n_blocks()), BlockDiagnostics{});
  {
    // Kokkos 3.4: the first reduction of a size resizes Serial's shared buffer; run them once here.
    // Host lambdas: Serial runs on the host, and nvcc forbids extended lambdas in constructors.
    double s = 0;
    const Kokkos::RangePolicy<compat::SerialHostSpace> once(compat::calling_thread_instance(), 0, 1);
    Kokkos::parallel_reduce(
        "korch hydro warm-up", once, [](int, double& x) { x += 1; }, Kokkos::Sum<double>(s));
    Kokkos::parallel_reduce(
        "korch hydro warm-up", once, [](int, double& x) { x = x < 1 ? x : 1; }, Kokkos::Min<double>(s));
  }
  set_initial_state(*grid_, o);
  initial_totals_ = totals();
  if (!o.restart.empty()) restore(o.restart);
  fill_guards();
  if (!o.operation.empty()) operation_ = make_operation(o.operation);
}

Simulation::~Simulation() = default;

void Simulation::set_configuration(HydroConfiguration configuration) {
  Options o = options_;
  o.config = configuration;
  if (o.tile > 0 && configuration == HydroConfiguration::device) o.tile = 0;
  validate(o);
  if (o.tile != options_.tile)
    throw Error::format("set_configuration: --config {} needs whole-block tiles; build the Simulation with tile 0",
                        builtin_name(configuration));
  configurations_[0] = make_configuration(o, 0, comm_.size());
  configurations_[1] = make_configuration(o, var_new, comm_.size());
  options_ = o;
}

void Simulation::set_device_kernel(DeviceKernel kernel) {
  options_.device_kernel = kernel;
  configurations_[0] = make_configuration(options_, 0, comm_.size());
  configurations_[1] = make_configuration(options_, var_new, comm_.size());
}

std::array<int, 3> Simulation::global_cells() const noexcept {
  const auto& s = grid_->spec();
  return {s.blocks[0] * s.block_cells[0], s.blocks[1] * s.block_cells[1], s.blocks[2] * s.block_cells[2]};
}

std::array<double, 3> Simulation::dx() const noexcept { return grid_->block(0).delta; }

EulerParams Simulation::euler_params(double dt) const {
  EulerParams p;
  p.gamma = options_.gamma;
  p.dt = dt;
  const auto d = dx();
  for (int i = 0; i < 3; ++i) p.dx[i] = d[static_cast<std::size_t>(i)];
  p.dim = options_.dim;
  p.limiter = options_.limiter;
  p.state = state_;
  p.next_state = other_set(state_);
  return p;
}

void Simulation::fill_guards() { exchange_->fill(state_, n_cons); }

void Simulation::swap_state() {
  flip_state();
  next_dt_ = 0.0;  // unknown: the plain loop's update reduced nothing
}

double Simulation::stable_dt() const {
  const auto data = grid_->read_data();
  const Box in = grid_->block(0).interior;
  const EulerParams p = euler_params(0.0);
  double m = 0;
  on_host_space(options_.host_parallel, [&](auto space) {
    using Space = decltype(space);
    Kokkos::parallel_reduce(
        "korch hydro cfl",
        Kokkos::MDRangePolicy<Space, Kokkos::Rank<3>>({0, in.lo[0], in.lo[1]}, {grid_->n_blocks(), in.hi[0], in.hi[1]}),
        [=](int b, int i, int j, double& lo) {
          for (int k = in.lo[2]; k < in.hi[2]; ++k) {
            double U[5];
            for (int v = 0; v < 5; ++v) U[v] = data(b, p.state + v, i, j, k);
            const double t = cell_dt(U, p);
            lo = t < lo ? t : lo;
          }
        },
        Kokkos::Min<double>(m));
    space.fence();
  });
  m = comm_.min(m);
  if (!(m > 0) || !std::isfinite(m)) stop_unphysical(state_, fmt::format("at step {} (t = {})", steps_, time_));
  return options_.cfl * m;
}

void Simulation::stop_unphysical(int set, const std::string& when) const {
  EulerParams p = euler_params(0.0);
  p.state = set;
  const auto cell = find_unphysical_cell(*grid_, p);
  std::string where = cell ? describe(*cell) : "";
  if (comm_.size() > 1) {
    // Every rank stops with the same message: that of the first rank holding such a cell.
    if (cell) where = fmt::format("rank {}, {}", comm_.rank(), where);
    for (const auto& text : comm_.all_gather(where)) {
      if (!text.empty()) {
        where = text;
        break;
      }
    }
  }
  if (where.empty()) where = "no cell of the state is at fault, the time step's reduction is";
  throw Error::format(
      "hydro: the state is not physical {}: {}; the run stops before writing its outputs: check the "
      "initial or restarted state, or lower --cfl",
      when, where);
}

// The dt the last cycle's tasks reduced: the minimum over this rank's boxes, then over the ranks.
// An unphysical cell makes its box's dt negative (cell_dt), which this minimum keeps; then every
// rank names the cell (stop_unphysical) of the state set the cycle wrote, `written`.
double Simulation::cycle_dt(int written) {
  double m = std::numeric_limits<double>::infinity();
  for (const double t : box_dt_) m = t < m || t != t ? t : m;
  m = comm_.min(m);
  if (!(m > 0) || !std::isfinite(m))
    stop_unphysical(written, fmt::format("after step {} (from t = {})", steps_ + 1, time_));
  return m;
}

bool Simulation::begin_trace() {
  if (!options_.write_output) return false;
  trace_.clear();
  runtime_->set_trace(&trace_);
  exchange_->set_trace(&trace_);
  return true;
}

void Simulation::end_trace() {
  runtime_->set_trace(nullptr);
  exchange_->set_trace(nullptr);
  auto ev = trace_.events();
  for (const auto& e : ev) {
    action_seconds_[e.category + ":" + e.name] += 1e-9 * static_cast<double>(e.end_ns - e.begin_ns);
    if (e.category == "transfer") ++transfer_events_;
  }
  const auto o = korch::transfer_overlap(ev);
  overlap_.transfers += o.transfers;
  overlap_.transfer_ns += o.transfer_ns;
  overlap_.overlapped_ns += o.overlapped_ns;
  const auto m = korch::overlap_with_tasks(ev, "communication", "messages in flight");
  comm_overlap_.transfers += m.transfers;
  comm_overlap_.transfer_ns += m.transfer_ns;
  comm_overlap_.overlapped_ns += m.overlapped_ns;
  recent_.keep(std::move(ev));
}

double Simulation::step(double dt_max) {
  if (operation_) return plan_step(dt_max);
  count_output_bytes();
  const double dt = time_step(dt_max);
  execute_hydro_bundle(dt);
  count_transfer_bytes();
  take_written_state();
  conduction_phase(dt);
  advance_clock(dt);
  return dt;
}

double Simulation::time_step(double dt_max) {
  const auto t0 = Clock::now();
  const double dt = std::min(next_dt_ > 0 ? options_.cfl * next_dt_ : stable_dt(), dt_max);
  phases_.dt += seconds_since(t0);
  return dt;
}

StepParameters Simulation::step_parameters(double dt) {
  StepParameters sp;
  sp.euler = euler_params(dt);
  sp.diagnostics = diagnostics_.data();
  sp.cell_volume = cell_volume();
  box_dt_.assign(static_cast<std::size_t>(grid_->n_blocks()) * static_cast<std::size_t>(grid_->tiles_per_block()),
                 std::numeric_limits<double>::infinity());
  sp.box_dt = box_dt_.data();
  sp.tiles_per_block = grid_->tiles_per_block();
  sp.fail_block = steps_ == 0 ? options_.inject_failure : -1;
  sp.device_kernel = options_.device_kernel;
  return sp;
}

void Simulation::execute_hydro_bundle(double dt) {
  Bundle bundle("hydro-step", ActionParameters(step_parameters(dt)));
  bundle.add(hydro_routine());
  if (options_.config == HydroConfiguration::action_parallel) bundle.add(diagnostics_routine());
  traced_cycle([&] {
    // The guard cells of the current state are filled inside the cycle: each block reaches the
    // distributor once its own are valid.
    blocks_when_ready_->set_variables(state_, n_cons);
    runtime_->execute(bundle, configuration(), *grid_, blocks_when_ready_.get());
  });
}

void Simulation::traced_cycle(const std::function<void()>& cycle) {
  const bool tracing = begin_trace();
  const auto t0 = Clock::now();
  try {
    cycle();
  } catch (...) {
    if (tracing) end_trace();
    throw;
  }
  phases_.execute += seconds_since(t0);
  if (tracing) end_trace();
}

// Every block sent to a device pipeline goes over with the copy-in variables and comes back with
// the copy-out ones.
// What the runtime's data movers copied this step, as it counted them (Runtime::last_transfers).
void Simulation::count_transfer_bytes() {
  const double packets = static_cast<double>(runtime_->last_transfers().total());
  const TransferBytes grid = grid_->residency_transfers(), fills = exchange_->device_transfers();
  // The packets' staging of a resident grid is in both the packets' and the grid's counts.
  const double state = grid_->residency() ? static_cast<double>(grid.total() - grid_moved_.total()) : packets;
  const double halo = static_cast<double>(fills.total() - fills_moved_.total());
  transfer_bytes_ += packets + static_cast<double>(grid.device_to_host - grid_moved_.device_to_host) + halo;
  state_bytes_ += state;
  halo_bytes_ += halo;
  grid_moved_ = grid;
  fills_moved_ = fills;
  trace_step_bytes(state, halo);
  if (const GridResidency* residency = grid_->residency()) {
    host_copy_kept_ = residency->host_bytes_kept();
    steps_without_host_copy_ += host_copy_kept_ == 0 ? 1 : 0;
  }
}

// The step's bytes by kind as counters in the trace of its cycle (trace.json shows them as tracks).
void Simulation::trace_step_bytes(double state, double halo) {
  if (!options_.write_output || recent_.kept() == 0) return;
  const std::int64_t at = trace_.now();
  const auto sample = [&](const char* kind, double bytes) {
    recent_.add_to_newest(bytes_counter(kind, static_cast<std::uint64_t>(bytes), at));
  };
  sample("state", state);
  sample("halo", halo);
  sample("output", step_output_bytes_);
}

// What a resident grid moved since the last step: what the outputs between steps read.
void Simulation::count_output_bytes() {
  const TransferBytes grid = grid_->residency_transfers();
  step_output_bytes_ = static_cast<double>(grid.total() - grid_moved_.total());
  output_bytes_ += step_output_bytes_;
  transfer_bytes_ += step_output_bytes_;
  grid_moved_ = grid;
}

void Simulation::take_written_state() {
  const auto t0 = Clock::now();
  flip_state();
  next_dt_ = cycle_dt(state_);
  phases_.dt += seconds_since(t0);
}

void Simulation::conduction_phase(double dt) {
  if (options_.conduction <= 0) return;
  const auto t0 = Clock::now();
  conduct_step(dt, state_);
  next_dt_ = 0.0;  // conduction changed the energy: the next step reduces its dt afresh
  phases_.conduction += seconds_since(t0);
}

void Simulation::advance_clock(double dt) {
  time_ += dt;
  ++steps_;
}

double Simulation::cell_volume() const noexcept {
  const auto d = dx();
  return d[0] * d[1] * (options_.dim == 3 ? d[2] : 1.0);
}

void Simulation::conduct_step(double dt, int set) {
#if defined(KORCH_HYDRO_HAVE_CONDUCTION)
  const double g = options_.gamma;
  std::vector<double> rho = gather_set(set, 0), mx = gather_set(set, 1), my = gather_set(set, 2),
                      mz = gather_set(set, 3), E = gather_set(set, 4);
  std::vector<double> T(rho.size());
  for (std::size_t c = 0; c < rho.size(); ++c) {
    const double kin = 0.5 * (mx[c] * mx[c] + my[c] * my[c] + mz[c] * mz[c]) / rho[c];
    T[c] = (g - 1.0) * (E[c] - kin) / rho[c];  // p / rho
  }
  const auto n = global_cells();
  const auto d = dx();
  conduct(T, n, {d[0], d[1], options_.dim == 3 ? d[2] : 1.0}, options_.conduction, dt, boundary_ == Boundary::periodic);
  auto data = grid_->data();
  for_each_interior_cell(*grid_, [&](int b, int i, int j, int k, std::size_t c) {
    const int s = set;
    const double r = data(b, s, i, j, k);
    const double kin =
        0.5 *
        (data(b, s + 1, i, j, k) * data(b, s + 1, i, j, k) + data(b, s + 2, i, j, k) * data(b, s + 2, i, j, k) +
         data(b, s + 3, i, j, k) * data(b, s + 3, i, j, k)) /
        r;
    data(b, s + 4, i, j, k) = r * T[c] / (g - 1.0) + kin;
  });
#else
  (void)dt;
  (void)set;
  throw Error(
      "option --conduction: this build has no conduction solver (apps/hydro/lib/physics/conduction.hpp missing)");
#endif
}

void Simulation::run() {
  const Options& o = options_;
  // A directory that cannot be written should fail the run now, not after its last step.
  if ((o.write_output || o.checkpoint_every > 0) && comm_.rank() == 0) prepare_output_directory(o.out);
  const double tmax = o.steps > 0 ? 0.0 : (o.tmax > 0 ? o.tmax : default_tmax(o.problem));
  const auto n = global_cells();
  const double cells = static_cast<double>(n[0]) * n[1] * n[2];
  const auto start = Clock::now();
  Progress progress(stdout, Progress::mode_for(o.quiet, stdout), cells);
  auto done = [&] { return o.steps > 0 ? steps_ >= o.steps : time_ >= tmax * (1.0 - 1e-12); };
  first_step_ = steps_;
  // A state that is not physical (a restart from a damaged checkpoint) stops the run before any
  // output is written, naming its cell.
  (void)stable_dt();
  PlotWriter plots(plot_run(*this));
  while (!done()) {
    const auto step_start = Clock::now();
    const double dt = step(std::min(o.steps > 0 ? 1e300 : tmax - time_, plots.max_dt()));
    (steps_ == first_step_ + 1 ? first_step_seconds_ : later_steps_seconds_) += seconds_since(step_start);
    const double fraction = done() ? 1.0 : (o.steps > 0 ? static_cast<double>(steps_) / o.steps : time_ / tmax);
    progress.update(fraction, steps_, time_, dt, seconds_since(start));
    plots.after_step();
    checkpoint_after_step(
        o, comm_, steps_, time_, checkpoint_path(), [&](const std::string& path) { write_checkpoint(path); },
        [&] { run_seconds_ = seconds_since(start); });
  }
  plots.finish();
  run_seconds_ = seconds_since(start);
}

std::vector<TraceEvent> Simulation::last_events() const { return recent_.events(); }

}  // namespace korch::hydro
