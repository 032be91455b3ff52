// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hand-bundled step's runtime configuration (see runtime_configuration.hpp).
#include "runtime_configuration.hpp"

#include "hydro_pack.hpp"

#include <korch/configurations/builtin.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace korch::hydro {

namespace {

// The packets' variables: the hydro update reads the current state and writes the other set, and
// on a GPU the uniform grid's face-flux and staged kernels keep their fluxes and predictions in
// scratch (update_pack); the diagnostics read the density alone.
PacketVariables packet_variables(const Options& o, int state) {
  PacketVariables v;
  if (o.config == HydroConfiguration::action_parallel) {
    v.copy_in = {state};
    return v;
  }
  for (int i = 0; i < n_cons; ++i) {
    v.copy_in.push_back(state + i);
    v.copy_out.push_back(other_set(state) + i);
  }
  if (device_is_accelerator && o.max_level == 0) v.scratch = kernel_scratch(o.device_kernel, o.dim);
  return v;
}

}  // namespace

int device_packet_blocks(const Options& o, int ranks) {
  if (o.packet_blocks > 0) return o.packet_blocks;
  constexpr int host_default = 2;
  if (!device_is_accelerator || o.max_level > 0) return host_default;
  constexpr long long target_cells = 1LL << 20;
  long long block_cells = 1, blocks = 1;
  for (int d = 0; d < o.dim; ++d) {
    block_cells *= o.cells_per_block;
    blocks *= o.blocks;
  }
  const long long enough = (target_cells + block_cells - 1) / block_cells;
  const long long rank_blocks = blocks / std::max(1, ranks);  // Decomposition shares them about evenly
  const long long per_thread = std::max(1LL, rank_blocks / std::max(1LL, static_cast<long long>(o.threads)));
  return static_cast<int>(std::max(1LL, std::min(enough, per_thread)));
}

std::vector<double> split_start_weights(bool accelerator) {
  // A GPU updates a block some ten to a hundred times faster than a host team's thread: with the
  // built-in's halves the first cycle would wait on the host for half the grid.
  constexpr double gpu_over_host = 15;
  return {1.0, accelerator ? gpu_over_host : 1.0};
}

Configuration make_configuration(const Options& o, int state, int ranks) {
  Configuration c = configurations::get(builtin_name(o.config));
  // split: the host's share of the blocks follows the rates measured in the cycles before, so that
  // host teams add to what the device does instead of holding it up (docs/configurations.md,
  // "Distribution by throughput"); --split-even keeps the built-in's halves.
  if (o.config == HydroConfiguration::split && !o.split_even)
    for (auto& g : c.distributor.groups) {
      g.policy = DistributionPolicy::throughput;
      g.weights = split_start_weights(device_is_accelerator);
    }
  for (auto& t : c.teams) {
    const bool diagnostics = o.config == HydroConfiguration::action_parallel && t.type != DataType::tile;
    t.action = diagnostics ? "diagnostics" : "hydro";
    t.initial_threads = o.threads;
  }
  for (auto& h : c.helpers) {
    h.threads = 1;
    if (h.kind == HelperKind::aggregator_mover || h.kind == HelperKind::aggregator) {
      h.packet_blocks = static_cast<std::size_t>(device_packet_blocks(o, ranks));
      h.variables = packet_variables(o, state);
    }
  }
  c.name = std::string("hydro-") + builtin_name(o.config) + (state == 0 ? "" : "-swapped");
  return c;
}

RuntimeOptions runtime_options(const Options& o) {
  RuntimeOptions ro;
  ro.n_teams = 2;
  ro.threads_per_team = o.threads;
  ro.n_helpers = 2;
  ro.helper_threads = 1;
  return ro;
}

}  // namespace korch::hydro
