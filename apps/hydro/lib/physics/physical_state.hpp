// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Naming the cell that stops a run: a step's time-step reduction (euler.hpp, cell_dt) only says
// that some cell is not physical; this finds the first such cell of a rank's blocks on the host,
// with the variable at fault, so that the error names the block, the cell and the variable.
#pragma once

#include "euler.hpp"

#include <korch/grid.hpp>

#include <array>
#include <optional>
#include <string>

namespace korch::hydro {

struct UnphysicalCell {
  int block = -1;                    // global block id
  std::array<int, 3> cell{};         // the cell within the block's interior, from 0
  std::array<int, 3> global_cell{};  // the cell within the whole grid
  std::string variable;              // "density", "momentum x", ..., "energy", "pressure", "signal speed"
  double value = 0.0;
  std::string fault;  // "is not finite", "is not positive", ...
};

// The first cell, in block order then i, j, k, of the interior of `grid`'s blocks whose conserved
// state (variables p.state .. p.state + 4) cell_dt rejects; nothing when every cell is physical.
std::optional<UnphysicalCell> find_unphysical_cell(const Grid& grid, const EulerParams& p);

// "block 3, cell (4, 5, 0) (global cell (20, 5, 0)): density = -1 is not positive"
std::string describe(const UnphysicalCell& cell);

}  // namespace korch::hydro
