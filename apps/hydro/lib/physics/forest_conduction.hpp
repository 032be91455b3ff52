// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Conduction on the leaves of an adaptive mesh (docs/hydro-verification.md, "Conduction"): the
// system of one backward-Euler step over every leaf's cells, composite across levels. Two cells
// that share a face couple through its area over their centres' distance along the face's normal;
// where a leaf meets a coarser one, each fine face couples its fine cell to the coarse cell behind
// it (distance 3/4 of a coarse cell), and the coarse cell gets one such coupling per fine face. The
// fluxes through a face are thus one number seen from both sides, and the total heat (temperature
// times volume) is kept.
#pragma once

#include "conduction_operator.hpp"

#include <korch/block_forest.hpp>

#include <array>

namespace korch::hydro {

// The system over forest.leaves() (rows in their Morton order, each leaf's cells x fastest:
// i + cells[0] * (j + cells[1] * k)). `cells`: every block's cells per axis (1 beyond the
// forest's dims); `root_cell_size`: a root block's cell size per axis (halved at each level).
// Weights are cell volumes over the finest leaf's cell volume, so on a forest whose leaves all
// share one level the system is the uniform grid's. Zero flux through non-periodic edges.
// Throws korch::Error for cells below 1 (or above 1 beyond dims), a cell size that is not positive
// and finite, or more cells than the matrix's int ordinals hold.
ConductionSystem forest_conduction_system(const BlockForest& forest, const std::array<int, 3>& cells,
                                          const std::array<double, 3>& root_cell_size);

}  // namespace korch::hydro
