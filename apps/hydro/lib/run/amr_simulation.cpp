// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro job on an adaptive mesh: set-up and the step loop (see amr_simulation.hpp). What it
// reports (totals, hash, summary, picture) is in amr_reports.cpp.
#include "amr_simulation.hpp"

#include "amr_hydro.hpp"
#include "checkpoint.hpp"
#include "checkpoint_after_step.hpp"
#include "configuration_names.hpp"
#include "forest_conduction.hpp"
#include "hydro_operation.hpp"
#include "plot_writer.hpp"
#include "progress.hpp"
#include "runtime_configuration.hpp"

#include <korch/bundle.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>
#include <korch/forest_fill_iterator.hpp>
#include <korch/output_files.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace korch::hydro {

namespace {

using Clock = std::chrono::steady_clock;

ForestMeshShape mesh_shape(const Options& o) {
  ForestMeshShape s;
  const bool periodic =
      o.boundary.value_or(o.problem == Problem::wave ? Boundary::periodic : Boundary::outflow) == Boundary::periodic;
  s.forest.dims = o.dim;
  s.forest.max_level = o.max_level;
  for (int a = 0; a < 3; ++a) {
    const bool along = a < o.dim;
    s.forest.roots[a] = along ? o.blocks : 1;
    s.forest.periodic[a] = along && periodic;
    s.cells[a] = along ? o.cells_per_block : 1;
    s.guard[a] = along ? guard_cells : 0;
    s.tile_cells[a] = along ? o.tile : 0;
  }
  s.n_vars = n_grid_vars;
  return s;
}

}  // namespace

AmrSimulation::~AmrSimulation() = default;

AmrSimulation::AmrSimulation(Options options, const Communicator& comm) : options_(std::move(options)), comm_(comm) {
  const Options& o = options_;
  validate(o);
  if (o.max_level < 1)
    throw Error("AmrSimulation: options without levels (--max-level 0): run the uniform grid's Simulation");
  mesh_ = std::make_unique<ForestMesh>("hydro", mesh_shape(o), comm_);
  configurations_[0] = make_configuration(o, 0, comm_.size());
  configurations_[1] = make_configuration(o, var_new, comm_.size());
  // The host configuration hands out whole leaves: each fills its own guard cells in the step.
  // Tiles of a leaf cannot: one fill cycle before the step fills each leaf once.
  // Nor can a plan's items (tiles or blocks, as the operation declares them): the same fill cycle.
  fused_ = o.config == HydroConfiguration::cpu && o.tile == 0 && o.operation.empty();
  fill_configuration_ = configurations::get("cpu_only");
  fill_configuration_.name = "hydro-guard-fill";
  fill_configuration_.teams[0].action = "guard_fill";
  fill_configuration_.teams[0].initial_threads = o.threads;
  flux_configuration_ = fill_configuration_;
  flux_configuration_.name = "hydro-face-fluxes";
  flux_configuration_.teams[0].action = "face_fluxes";
  runtime_ = std::make_unique<Runtime>(runtime_options(o));
  if (!o.operation.empty()) operation_ = make_operation();
  regrid_.refine_above = o.refine_above;
  regrid_.derefine_below = o.derefine_below;
  if (!o.restart.empty()) {
    restore(o.restart);
    return;
  }
  // The initial state, refined level by level around its features: each level's cells are
  // averages of the finest cells, so the deposit is seen at every level.
  for (int level = 0; level < o.max_level; ++level) {
    set_amr_initial_state(*mesh_, o);
    regrid();
  }
  set_amr_initial_state(*mesh_, o);
  regrids_ = 0;
  migrated_ = 0;
  phases_ = AmrPhaseTimes{};
  mesh_->fill_guard_cells();
  initial_totals_ = totals();
}

EulerParams AmrSimulation::params(double dt) const {
  EulerParams p;
  p.gamma = options_.gamma;
  p.dt = dt;
  p.dim = options_.dim;
  p.limiter = options_.limiter;
  p.state = state_;
  p.next_state = other_set(state_);
  return p;
}

void AmrSimulation::fill_guard_cells(bool find_dt, bool find_estimates) {
  const std::size_t blocks = mesh_->own_leaves().size();
  guards_filled_ = true;
  if (find_dt) {
    block_dt_.assign(blocks, 0.0);
    block_dt_valid_ = true;
  }
  if (find_estimates) {
    set_estimate_vars();
    block_estimate_.assign(blocks, 0.0);
  }
  AmrFillParameters fill_params{mesh_.get(),
                                state_,
                                find_dt ? block_dt_.data() : nullptr,
                                params(0.0),
                                find_estimates ? block_estimate_.data() : nullptr,
                                &regrid_};
  Bundle fill("guard fill", ActionParameters(fill_params));
  fill.add(amr_guard_fill_routine());
  // Each leaf goes out once the other ranks' leaves its fill reads have arrived.
  ForestFillIterator leaves(*mesh_, state_, n_cons, ForestFillIterator::Fill::by_the_action);
  runtime_->execute(fill, fill_configuration_, mesh_->blocks(), &leaves);
}

void AmrSimulation::set_estimate_vars() {
  // The mesh follows the density and the energy: a blast's front shows in both, a contact in the
  // density alone.
  regrid_.vars = {state_, state_ + n_cons - 1};
}

double AmrSimulation::stable_dt() const {
  const double mine = amr_stable_dt(*mesh_, block_dt_, params(0.0));
  return options_.cfl * (comm_.size() > 1 ? comm_.min(mine) : mine);
}

void AmrSimulation::correct_fluxes(const EulerParams& p) {
  if (std::find(faces_recorded_.begin(), faces_recorded_.end(), 0) != faces_recorded_.end()) {
    Bundle record("face fluxes", ActionParameters(AmrFluxParameters{mesh_.get(), p, faces_recorded_.data()}));
    record.add(amr_face_flux_routine());
    runtime_->execute(record, flux_configuration_, mesh_->blocks());
  }
  mesh_->correct_fluxes(p.dt);
}

RegridCounts AmrSimulation::regrid() {
  const auto t0 = Clock::now();
  // The estimate reads the current state's guard cells, which the fill cycle fills; the next
  // step fills them again on the new mesh.
  fill_guard_cells(false, true);
  estimates_valid_ = true;
  phases_.regrid += seconds_since(t0);
  return regrid_on_step_estimates();
}

RegridCounts AmrSimulation::regrid_on_step_estimates() {
  if (!estimates_valid_)
    throw Error(
        "AmrSimulation: regrid_on_step_estimates() without estimates: the last step did not find them on this mesh; "
        "give step(dt, true) first, or call regrid()");
  const auto t0 = Clock::now();
  estimates_valid_ = false;
  regrid_.guard_cells_filled = true;
  regrid_.fill_afterwards = false;
  regrid_.estimates = &block_estimate_;
  // Each leaf's update time since the last regrid: the ranks share the new leaves by it.
  std::vector<double> costs;
  if (options_.balance == "cost" && block_ns_.size() == mesh_->own_leaves().size()) {
    for (const auto& ns : block_ns_) costs.push_back(1e-9 * static_cast<double>(ns.load()));
    regrid_.costs = &costs;
  }
  const RegridCounts counts = mesh_->regrid(regrid_);
  regrid_.estimates = nullptr;
  regrid_.costs = nullptr;
  block_ns_.clear();
  migrated_ += counts.migrated;
  if (counts.refined > 0 || counts.derefined > 0 || counts.migrated > 0)
    block_dt_valid_ = guards_filled_ = false;  // other leaves
  ++regrids_;
  phases_.regrid += seconds_since(t0);
  return counts;
}

void AmrSimulation::update(const EulerParams& p, bool guards_filled, bool estimate) {
  const std::size_t blocks = mesh_->own_leaves().size();
  faces_recorded_.assign(blocks, 0);
  AmrStepParameters step{p, mesh_.get(), faces_recorded_.data()};
  if (estimate) {
    set_estimate_vars();
    block_estimate_.assign(blocks, 0.0);
    step.block_estimate = block_estimate_.data();
    step.regrid = &regrid_;
  }
  if (options_.balance == "cost") {
    if (block_ns_.size() != blocks) {
      block_ns_ = std::vector<std::atomic<std::int64_t>>(blocks);
      for (auto& ns : block_ns_) ns.store(0);
    }
    step.block_ns = block_ns_.data();
  }
  if (fused_) {
    if (!guards_filled) step.fill_var = p.state;
    next_block_dt_.assign(blocks, 0.0);
    step.block_dt = next_block_dt_.data();
  }
  if (steps_ == 0 && options_.inject_failure >= 0) fail_on_leaf(step);
  if (options_.config == HydroConfiguration::action_parallel || operation_) {
    diagnostics_.assign(blocks, BlockDiagnostics{});
    step.diagnostics = diagnostics_.data();
  }
  if (operation_) {
    operation_->run(*runtime_, mesh_->blocks(), p, diagnostics_.data(), 1.0, &step);
    return;
  }
  Bundle bundle("hydro step", ActionParameters(step));
  bundle.add(amr_hydro_routine());
  if (step.diagnostics != nullptr) bundle.add(amr_diagnostics_routine());
  if (step.fill_var >= 0) {
    // The leaves fill their guard cells in the cycle: each goes out once the other ranks' leaves
    // its fill reads have arrived, so the messages travel while the first leaves compute.
    ForestFillIterator leaves(*mesh_, p.state, n_cons, ForestFillIterator::Fill::by_the_action);
    runtime_->execute(bundle, configurations_[state_ == 0 ? 0 : 1], mesh_->blocks(), &leaves);
  } else {
    runtime_->execute(bundle, configurations_[state_ == 0 ? 0 : 1], mesh_->blocks());
  }
}

// The ranks own contiguous pieces of the Morton curve in rank order: the leaf of --inject-failure is
// this rank's when it falls in its piece. Collective; every rank throws alike when there is no such leaf.
void AmrSimulation::fail_on_leaf(AmrStepParameters& step) const {
  const auto own = static_cast<std::uint64_t>(mesh_->own_leaves().size());
  const std::vector<std::uint64_t> counts =
      comm_.size() > 1 ? comm_.all_gather(std::vector<std::uint64_t>{own}) : std::vector<std::uint64_t>{own};
  std::uint64_t first = 0, leaves = 0;
  for (int r = 0; r < static_cast<int>(counts.size()); ++r) {
    if (r < comm_.rank()) first += counts[static_cast<std::size_t>(r)];
    leaves += counts[static_cast<std::size_t>(r)];
  }
  const auto leaf = static_cast<std::uint64_t>(options_.inject_failure);
  if (leaf >= leaves)
    throw Error::format("option --inject-failure: leaf {} does not exist: the mesh has leaves 0..{} at the first step",
                        leaf, leaves - 1);
  if (leaf >= first && leaf < first + own) step.fail_block = static_cast<int>(leaf - first);
  step.fail_leaf = static_cast<int>(leaf);
}

BlockDiagnostics AmrSimulation::diagnostics() const {
  if ((options_.config != HydroConfiguration::action_parallel && !operation_) || steps_ == 0)
    throw Error::format(
        "AmrSimulation::diagnostics(): configuration {} after {} steps; the device team finds them on "
        "cpu_gpu_action_parallel, and the plan with --plan, in every step",
        configuration_label(options_), steps_);
  std::vector<double> mine;
  for (const BlockDiagnostics& d : diagnostics_) mine.insert(mine.end(), {d.mass, d.rho_min, d.rho_max});
  const std::vector<double> all = comm_.size() > 1 ? comm_.all_gather(mine) : mine;
  BlockDiagnostics out{0.0, std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (std::size_t n = 0; n + 2 < all.size(); n += 3) {
    out.mass += all[n];
    out.rho_min = std::min(out.rho_min, all[n + 1]);
    out.rho_max = std::max(out.rho_max, all[n + 2]);
  }
  return out;
}

void AmrSimulation::add_corrected_dts(const EulerParams& p) {
  EulerParams written = p;
  written.state = p.next_state;
  const int dims = mesh_->shape().forest.dims;
  for (int b = 0; b < static_cast<int>(next_block_dt_.size()); ++b) {
    double& dt = next_block_dt_[static_cast<std::size_t>(b)];
    for (int axis = 0; axis < dims; ++axis)
      for (int side = 0; side < 2; ++side)
        if (mesh_->face_neighbour(b, axis, side) == ForestNeighbour::Kind::finer)
          dt = std::min(dt, amr_face_cells_dt(*mesh_, b, written, axis, side));  // unphysical_dt is below all
  }
}

double AmrSimulation::step(double dt_max, bool estimate) {
  auto t0 = Clock::now();
  estimates_valid_ = false;
  // Without the fused step, or without the time step of this mesh (the first step, a regrid that
  // changed the leaves, a restart), a fill cycle fills the guard cells and finds it; without the
  // fused step, the estimates too (the device's update does not find them).
  if (!fused_ || !block_dt_valid_) fill_guard_cells(true, estimate && !fused_);
  phases_.guard_fill += seconds_since(t0);
  t0 = Clock::now();
  const double dt = std::min(stable_dt(), dt_max);
  phases_.time_step += seconds_since(t0);
  t0 = Clock::now();
  const EulerParams p = params(dt);
  update(p, guards_filled_, estimate && fused_);
  estimates_valid_ = estimate;
  phases_.execute += seconds_since(t0);
  t0 = Clock::now();
  correct_fluxes(p);
  if (fused_) {
    add_corrected_dts(p);
    block_dt_.swap(next_block_dt_);
  }
  phases_.flux_correction += seconds_since(t0);
  state_ = other_set(state_);
  guards_filled_ = false;
  conduct(dt);
  time_ += dt;
  ++steps_;
  const auto& s = mesh_->shape();
  cell_updates_ += static_cast<double>(mesh_->forest().n_leaves()) * s.cells[0] * s.cells[1] * s.cells[2];
  return dt;
}

void AmrSimulation::conduct(double dt) {
  if (options_.conduction <= 0) return;
  const auto t0 = Clock::now();
  const BlockForest& forest = mesh_->forest();
  if (!conduction_ || conduction_leaves_ != forest.leaves()) {
    conduction_.reset();
    conduction_ = std::make_unique<ConductionOperator>(
        forest_conduction_system(forest, mesh_->shape().cells, mesh_->cell_size(0)));
    conduction_leaves_ = forest.leaves();
  }
  // Each leaf's cells in the system's order (x fastest); on ranks, every rank's leaves in rank order
  // are the Morton curve's, and every rank solves the whole system (the same bits as one process).
  const ForestMeshShape& s = mesh_->shape();
  const double g = options_.gamma;
  const auto for_each_cell = [&](auto&& f) {
    for (int b = 0; b < static_cast<int>(mesh_->own_leaves().size()); ++b) {
      const BlockArray& a = mesh_->array(b);
      for (int k = 0; k < s.cells[2]; ++k)
        for (int j = 0; j < s.cells[1]; ++j)
          for (int i = 0; i < s.cells[0]; ++i) {
            double* u = a.data + state_ * a.stride[0] + (i + s.guard[0]) * a.stride[1] +
                        (j + s.guard[1]) * a.stride[2] + (k + s.guard[2]) * a.stride[3];
            const std::ptrdiff_t v = a.stride[0];
            const double kinetic = 0.5 * (u[v] * u[v] + u[2 * v] * u[2 * v] + u[3 * v] * u[3 * v]) / u[0];
            f(u, v, kinetic);
          }
    }
  };
  std::vector<double> temperature;
  temperature.reserve(static_cast<std::size_t>(conduction_->rows()));
  for_each_cell([&](double* u, std::ptrdiff_t v, double kinetic) {
    temperature.push_back((g - 1.0) * (u[4 * v] - kinetic) / u[0]);  // p / rho
  });
  std::size_t c = 0;  // this rank's first cell in the system
  if (comm_.size() > 1) {
    const std::vector<std::uint64_t> counts = comm_.all_gather(std::vector<std::uint64_t>{temperature.size()});
    for (int r = 0; r < comm_.rank(); ++r) c += static_cast<std::size_t>(counts[static_cast<std::size_t>(r)]);
    temperature = comm_.all_gather(temperature);
  }
  conduction_->solve(temperature, options_.conduction * dt, 1e-10, 1000, "option --conduction");
  for_each_cell(
      [&](double* u, std::ptrdiff_t v, double kinetic) { u[4 * v] = u[0] * temperature[c++] / (g - 1.0) + kinetic; });
  block_dt_valid_ = false;  // the energy changed: the next step finds its time step afresh
  phases_.conduction += seconds_since(t0);
}

std::unique_ptr<HydroOperation> AmrSimulation::make_operation() {
  plan::Operation op = load_operation(options_.operation);
  op.parameters["conduction"] = options_.conduction;
  check_operation_for(op, options_, options_.operation);
  HydroStepHooks hooks;
  // The fill cycle before each plan fills the current set's guard cells (and finds the time step).
  hooks.fill_current_guards = [this] {
    if (!guards_filled_) mesh_->fill_guard_cells();
  };
  // step() corrects the fluxes after the plan and conducts after the correction; the fill cycle
  // before the next step finds its time step.
  hooks.time_step = [](const HydroStepState&) {};
  hooks.conduction = [](const HydroStepState&) {};
  const RuntimeShape shape{2, options_.threads, 2, 1};  // runtime_options()
  return std::make_unique<HydroOperation>(std::move(op), shape, std::move(hooks),
                                          static_cast<int>(mesh_->own_leaves().size()), true);
}

void AmrSimulation::run() {
  const Options& o = options_;
  // A directory that cannot be written should fail the run now, not after its last step.
  if ((o.write_output || o.checkpoint_every > 0) && comm_.rank() == 0) prepare_output_directory(o.out);
  const double tmax = o.steps > 0 ? 0.0 : (o.tmax > 0 ? o.tmax : default_tmax(o.problem));
  const auto start = Clock::now();
  const auto& s = mesh_->shape();
  Progress progress(stdout, Progress::mode_for(o.quiet, stdout),
                    static_cast<double>(mesh_->forest().n_leaves()) * s.cells[0] * s.cells[1] * s.cells[2]);
  const auto done = [&] { return o.steps > 0 ? steps_ >= o.steps : time_ >= tmax * (1.0 - 1e-12); };
  PlotWriter plots(plot_run(*this));
  while (!done()) {
    // The step before a regrid finds the estimates while its leaves' guard cells are filled.
    const bool regrid_after = (steps_ + 1) % o.regrid_every == 0;
    const double dt = step(std::min(o.steps > 0 ? 1e300 : tmax - time_, plots.max_dt()), regrid_after);
    if (regrid_after) regrid_on_step_estimates();
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

}  // namespace korch::hydro
