// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Simulation's checkpoints (checkpoint.hpp has the file format): the state written by rank 0
// from the gathered field, and read back into this rank's blocks by --restart.
#include "simulation.hpp"

#include "checkpoint.hpp"

#include <cstddef>
#include <filesystem>
#include <string>

namespace korch::hydro {

void Simulation::restore(const std::string& path) {
  const CheckpointContent c = read_checkpoint_file(path, options_);
  const auto n = global_cells();
  auto data = grid_->data();
  state_ = 0;
  for (const auto& m : grid_->blocks())
    for (int v = 0; v < n_cons; ++v)
      for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k)
        for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
          for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i) {
            const std::size_t I =
                static_cast<std::size_t>(m.index[0] * options_.cells_per_block + i - m.interior.lo[0]);
            const std::size_t J =
                static_cast<std::size_t>(m.index[1] * options_.cells_per_block + j - m.interior.lo[1]);
            const std::size_t K = static_cast<std::size_t>(
                m.index[2] * (options_.dim == 3 ? options_.cells_per_block : 1) + k - m.interior.lo[2]);
            data(m.id, v, i, j, k) =
                c.state[static_cast<std::size_t>(v)]
                       [I + static_cast<std::size_t>(n[0]) * (J + static_cast<std::size_t>(n[1]) * K)];
          }
  time_ = c.time;
  steps_ = c.steps;
  initial_totals_ = c.initial_totals;
  next_dt_ = 0.0;  // reduced afresh from the restored state: the value the cycle would have given
}

void Simulation::write_checkpoint(const std::string& path) const {
  CheckpointContent c = checkpoint_fields(options_);
  for (int v = 0; v < n_cons; ++v) c.state[static_cast<std::size_t>(v)] = gather(v);  // collective
  if (comm_.rank() != 0) return;
  c.time = time_;
  c.steps = steps_;
  c.initial_totals = initial_totals_;
  write_checkpoint_file(path, c);
}

std::string Simulation::checkpoint_path() const {
  return (std::filesystem::path(options_.out) / "checkpoint.bin").string();
}

}  // namespace korch::hydro
