// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Steps run from a plan (docs/planner.md, "Hydro as an operation"): the operation of one step,
// planned for this Simulation's runtime, with the work between bundles (the guard-cell fill, the
// time-step reduction, conduction) done by the Simulation as the hand-bundled step does it, so
// that both give the same bits.
#include "simulation.hpp"

#include "hydro_operation.hpp"

#include <korch/error.hpp>

#include <algorithm>
#include <utility>
#include <limits>

namespace korch::hydro {

std::unique_ptr<HydroOperation> Simulation::make_operation(const std::string& file) {
  plan::Operation op = load_operation(file);
  op.parameters["conduction"] = options_.conduction;
  check_operation_for(op, options_, file);
  HydroStepHooks hooks;
  hooks.fill_current_guards = [this] { fill_guards(); };
  // As in the hand-bundled step: each block reaches the teams once its own guard cells are valid.
  hooks.current_guards_order = [this]() -> BlockIterator* {
    blocks_when_ready_->set_variables(state_, n_cons);
    return blocks_when_ready_.get();
  };
  hooks.time_step = [this](const HydroStepState& s) {
    // The hand-bundled step's per-box slots, one per block (tile 0): cycle_dt() reduces them alike.
    box_dt_.assign(static_cast<std::size_t>(grid_->n_blocks()) * static_cast<std::size_t>(grid_->tiles_per_block()),
                   std::numeric_limits<double>::infinity());
    for (int b = 0; b < s.n_blocks; ++b)
      box_dt_[static_cast<std::size_t>(b) * static_cast<std::size_t>(grid_->tiles_per_block())] =
          s.block_dt[static_cast<std::size_t>(b)].load(std::memory_order_relaxed);
    next_dt_ = cycle_dt(s.euler.next_state);
  };
  hooks.conduction = [this](const HydroStepState& s) {
    conduct_step(s.euler.dt, s.euler.next_state);
    next_dt_ = 0.0;  // conduction changed the energy: the next step reduces its dt afresh
  };
  const RuntimeShape shape{2, options_.threads, 2, 1};  // the runtime the constructor made
  return std::make_unique<HydroOperation>(std::move(op), shape, std::move(hooks), grid_->n_blocks());
}

void Simulation::set_operation(const std::string& operation) {
  Options o = options_;
  o.operation = operation;
  validate(o);
  if (operation == options_.operation) return;
  // A plan made before is switched back to as it is (its routines built), so that alternating
  // steps time the plan's steps and not its making.
  std::unique_ptr<HydroOperation> next;
  if (!operation.empty()) {
    const auto kept = planned_.find(operation);
    if (kept != planned_.end()) {
      next = std::move(kept->second);
      planned_.erase(kept);
    } else {
      next = make_operation(operation);  // throws before anything changed
    }
  }
  if (operation_) planned_[options_.operation] = std::move(operation_);
  operation_ = std::move(next);
  options_ = std::move(o);
}

// The same phases as step(): the plan's bundles do the update, the time-step reduction and
// conduction (through the hooks above).
double Simulation::plan_step(double dt_max) {
  const double dt = time_step(dt_max);
  traced_cycle([&] { operation_->run(*runtime_, *grid_, euler_params(dt), diagnostics_.data(), cell_volume()); });
  flip_state();  // the state the plan wrote is the current one now
  advance_clock(dt);
  return dt;
}

std::string Simulation::configuration_label() const { return hydro::configuration_label(options_); }

}  // namespace korch::hydro
