// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "hydro_operation.hpp"

#include "configuration_names.hpp"
#include "euler_host_sweep.hpp"
#include "host_cells.hpp"
#include "options.hpp"
#include "simulation.hpp"

#include <korch/error.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/scheduler.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

namespace korch::hydro {

namespace {

const char* const role_names[n_grid_vars] = {"rho",      "mx",      "my",      "mz",      "E",
                                             "rho_next", "mx_next", "my_next", "mz_next", "E_next"};

void check_whole_block(const Grid& grid, int block, const Box& box, const char* action) {
  if (!(box == grid.block(block).interior))
    throw Error::format(
        "hydro action '{}': block {} came as a part of its interior; the action works on whole blocks: "
        "declare \"data_type\": \"block\" in the operation file",
        action, grid.block(block).global_id);
}

// Guard cells are filled for the current state set only (the exchange fills a set's five variables).
void check_current_set(const std::vector<int>& variables) {
  for (int v : variables)
    if (v < 0 || v >= n_cons)
      throw Error::format(
          "hydro operation: a guard-cell fill of '{}': korch-hydro fills the current state set (rho..E) "
          "only; no action may read a variable of the next set with a stencil",
          v >= 0 && v < n_grid_vars ? role_names[v] : "?");
}

// The slot's value becomes min(slot, value): tiles of one block may finish at the same time.
void lower(std::atomic<double>& slot, double value) {
  double have = slot.load(std::memory_order_relaxed);
  while (value < have && !slot.compare_exchange_weak(have, value, std::memory_order_relaxed)) {
  }
}

bool has_reduction(const plan::Operation& op, const std::string& name) {
  for (const auto& s : op.steps)
    if (!s.is_action && s.barrier.kind == plan::BarrierKind::reduction && s.barrier.name == name) return true;
  return false;
}

bool has_tile_action(const plan::Operation& op) {
  for (const ActionDeclaration* a : op.actions())
    if (a->data_type == DeclaredDataType::tile) return true;
  return false;
}

}  // namespace

plan::Operation load_operation(const std::string& path) {
  std::string text;
  if (path == "builtin") {
    text = builtin_operation_json();
  } else {
    std::ifstream in(path);
    if (!in) throw Error::format("operation file '{}' cannot be read: give an existing file, or builtin", path);
    std::ostringstream s;
    s << in.rdbuf();
    text = s.str();
  }
  plan::Operation op;
  try {
    op = plan::Operation::from_json(text);
  } catch (const Error& e) {
    throw Error::format("operation file '{}': {}", path, e.what());
  }
  bool roles = op.variables.size() == static_cast<std::size_t>(n_grid_vars);
  for (std::size_t v = 0; roles && v < op.variables.size(); ++v) roles = op.variables[v] == role_names[v];
  if (!roles)
    throw Error::format(
        "operation file '{}': field variables: korch-hydro's variables are [{}] in this order (the current "
        "state set, then the one a step writes); the file lists [{}]",
        path, fmt::join(role_names, role_names + n_grid_vars, ", "), fmt::join(op.variables, ", "));
  return op;
}

void check_operation_for(const plan::Operation& op, const Options& options, const std::string& file) {
  // Nothing the run asks for may be left out silently by an edited operation file.
  if (!has_reduction(op, "time_step"))
    throw Error::format(
        "operation file '{}': it has no reduction \"time_step\": add {{\"barrier\": \"reduction\", "
        "\"name\": \"time_step\", ...}} after the actions",
        file);
  if (options.conduction > 0 && !has_reduction(op, "conduction"))
    throw Error::format(
        "option --conduction {}: operation file '{}' has no reduction \"conduction\": add one, or leave "
        "--conduction out",
        options.conduction, file);
  // --tile sizes the items of the actions declared on tiles; an operation without any would ignore it.
  if (options.tile > 0 && !has_tile_action(op))
    throw Error::format(
        "option --tile {}: operation file '{}' declares no action on tiles: give hydro_update (and "
        "cell_dt) \"data_type\": \"tile\", or leave --tile out",
        options.tile, file);
}

std::string configuration_label(const Options& o) {
  if (o.operation.empty()) return builtin_name(o.config);
  return o.operation == "builtin" ? "plan of the built-in operation" : "plan of " + o.operation;
}

plan::ActionRegistry hydro_action_registry(HydroStepState& state, HydroStepHooks hooks) {
  HydroStepState* s = &state;
  plan::ActionRegistry registry;
  // The hand-bundled task's host update on the item's box (a tile or the whole interior): the same
  // per-cell arithmetic whichever box holds a cell.
  registry.add("hydro_update", [s](DataSource& source, int block, const Box& box) {
    const Grid& grid = as_grid(source);
    HostVar vars[n_grid_vars];
    for (int v = 0; v < n_grid_vars; ++v) vars[v] = host_var(grid, block, v);
    update_box_host(vars, s->euler, box.lo.data(), box.hi.data());
  });
  // The same cell_dt over the same cells as the hand-bundled step's per-box reduction; a minimum
  // is exact, so the time step does not depend on the order of the blocks.
  registry.add("cell_dt", [s](DataSource& source, int block, const Box& box) {
    const Grid& grid = as_grid(source);
    const EulerParams& p = s->euler;
    HostVar u[n_cons];
    for (int v = 0; v < n_cons; ++v) u[v] = host_var(grid, block, p.next_state + v);
    double m = std::numeric_limits<double>::infinity();
    for (int i = box.lo[0]; i < box.hi[0]; ++i)
      for (int j = box.lo[1]; j < box.hi[1]; ++j)
        for (int k = box.lo[2]; k < box.hi[2]; ++k) {
          const double U[5] = {u[0](i, j, k), u[1](i, j, k), u[2](i, j, k), u[3](i, j, k), u[4](i, j, k)};
          const double t = cell_dt(U, p);
          m = t < m ? t : m;
        }
    lower(s->block_dt[static_cast<std::size_t>(block)], m);
  });
  registry.add("diagnostics", [s](DataSource& source, int block, const Box& box) {
    const Grid& grid = as_grid(source);
    check_whole_block(grid, block, box, "diagnostics");
    const HostVar rho = host_var(grid, block, s->euler.state);
    double sum = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int i = box.lo[0]; i < box.hi[0]; ++i)
      for (int j = box.lo[1]; j < box.hi[1]; ++j)
        for (int k = box.lo[2]; k < box.hi[2]; ++k) {
          const double r = rho(i, j, k);
          sum += r;
          lo = r < lo ? r : lo;
          hi = r > hi ? r : hi;
        }
    s->diagnostics[block] = BlockDiagnostics{sum * s->cell_volume, lo, hi};
  });
  add_step_hooks(registry, state, std::move(hooks));
  return registry;
}

void add_step_hooks(plan::ActionRegistry& registry, HydroStepState& state, HydroStepHooks hooks) {
  HydroStepState* s = &state;
  registry.hooks.fill_guards = [fill = hooks.fill_current_guards](DataSource&, const std::vector<int>& variables) {
    check_current_set(variables);
    fill();
  };
  if (hooks.current_guards_order) {
    registry.hooks.filling_order = [order = hooks.current_guards_order](DataSource&,
                                                                        const std::vector<int>& variables) {
      check_current_set(variables);
      return order();
    };
  }
  registry.hooks.reduce = [s, hooks](DataSource&, const std::string& name, const std::vector<int>&) {
    if (name == "time_step") {
      hooks.time_step(*s);
    } else if (name == "conduction") {
      hooks.conduction(*s);
    } else {
      throw Error::format("hydro operation: reduction '{}' is unknown: korch-hydro reduces time_step and conduction",
                          name);
    }
  };
}

HydroOperation::HydroOperation(plan::Operation operation, const RuntimeShape& shape, HydroStepHooks hooks, int n_blocks,
                               bool adaptive)
    : operation_(std::move(operation)), state_(std::make_unique<HydroStepState>()) {
  state_->n_blocks = n_blocks;
  state_->block_dt = std::make_unique<std::atomic<double>[]>(static_cast<std::size_t>(n_blocks));
  const plan::ActionRegistry registry =
      adaptive ? amr_action_registry(*state_, std::move(hooks)) : hydro_action_registry(*state_, std::move(hooks));
  plan::ActionBodies bodies;
  for (const ActionDeclaration* a : operation_.actions()) bodies[a->action] = registry.body(a->action);
  executor_ = std::make_unique<plan::Executor>(operation_, std::move(bodies), registry.hooks);
  plan::SchedulerOptions options;
  options.shape = shape;
  options.cost.devices = false;
  plan_ = plan::Scheduler(options).plan(plan::KernelGraph(operation_));
}

bool HydroOperation::has_action(const std::string& name) const {
  for (const ActionDeclaration* a : operation_.actions())
    if (a->action == name) return true;
  return false;
}

void HydroOperation::run(Runtime& runtime, DataSource& source, const EulerParams& euler, BlockDiagnostics* diagnostics,
                         double cell_volume, const AmrStepParameters* amr) {
  state_->euler = euler;
  state_->diagnostics = diagnostics;
  state_->cell_volume = cell_volume;
  state_->amr = amr;
  if (source.n_blocks() != state_->n_blocks) {  // an adaptive mesh's leaves after a regrid
    state_->n_blocks = source.n_blocks();
    state_->block_dt = std::make_unique<std::atomic<double>[]>(static_cast<std::size_t>(state_->n_blocks));
  }
  for (int b = 0; b < state_->n_blocks; ++b)
    state_->block_dt[static_cast<std::size_t>(b)].store(std::numeric_limits<double>::infinity(),
                                                        std::memory_order_relaxed);
  executor_->run(plan_, runtime, source);
}

}  // namespace korch::hydro
