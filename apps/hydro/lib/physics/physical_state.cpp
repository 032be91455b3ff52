// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Naming the cell that stops a run (see physical_state.hpp).
#include "physical_state.hpp"

#include "host_cells.hpp"

#include <fmt/format.h>

#include <cmath>

namespace korch::hydro {

namespace {

// What is wrong with one cell that cell_dt rejects: the first conserved variable that is not
// finite, else a density or a pressure that is not positive and finite, else its signal speed.
UnphysicalCell fault_of(const double U[5], const EulerParams& p) {
  static const char* const names[5] = {"density", "momentum x", "momentum y", "momentum z", "energy"};
  UnphysicalCell c;
  for (int v = 0; v < 5; ++v) {
    if (!std::isfinite(U[v])) {
      c.variable = names[v];
      c.value = U[v];
      c.fault = "is not finite";
      return c;
    }
  }
  double W[5];
  cons_to_prim(U, W, p.gamma);
  if (!(W[0] > 0)) {
    c.variable = "density";
    c.value = W[0];
    c.fault = "is not positive";
  } else if (!(W[4] > 0) || !std::isfinite(W[4])) {
    c.variable = "pressure";
    c.value = W[4];
    c.fault = std::isfinite(W[4]) ? "is not positive" : "is not finite";
  } else {
    c.variable = "time step";
    c.value = cell_dt(U, p);
    c.fault = "is not positive and finite (the velocity overflows)";
  }
  return c;
}

}  // namespace

std::optional<UnphysicalCell> find_unphysical_cell(const Grid& grid, const EulerParams& p) {
  const auto& spec = grid.spec();
  for (const auto& m : grid.blocks()) {
    HostVar u[5];
    for (int v = 0; v < 5; ++v) u[v] = host_var(grid, m.id, p.state + v);
    for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
      for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
        for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k) {
          const double U[5] = {u[0](i, j, k), u[1](i, j, k), u[2](i, j, k), u[3](i, j, k), u[4](i, j, k)};
          if (cell_dt(U, p) != unphysical_dt) continue;
          UnphysicalCell c = fault_of(U, p);
          c.block = m.global_id;
          const int at[3] = {i, j, k};
          for (std::size_t d = 0; d < 3; ++d) {
            c.cell[d] = at[d] - m.interior.lo[d];
            c.global_cell[d] = m.index[d] * spec.block_cells[d] + c.cell[d];
          }
          return c;
        }
  }
  return std::nullopt;
}

std::string describe(const UnphysicalCell& c) {
  return fmt::format("block {}, cell ({}, {}, {}) (global cell ({}, {}, {})): {} = {} {}", c.block, c.cell[0],
                     c.cell[1], c.cell[2], c.global_cell[0], c.global_cell[1], c.global_cell[2], c.variable, c.value,
                     c.fault);
}

}  // namespace korch::hydro
