// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The plot frame of an adaptive run (plot_writer.hpp): each leaf's interior stacked leaf after leaf
// in Morton order along the last direction, so that every rank's leaves are one contiguous box of
// the stacked datasets, and the leaves' places for the XDMF file (docs/plot-files.md).
#include "amr_simulation.hpp"
#include "plot_writer.hpp"

#include <cstddef>
#include <vector>

namespace korch::hydro {

PlotFrame plot_frame(const AmrSimulation& sim) {
  const ForestMesh& mesh = sim.mesh();
  const ForestMeshShape& s = mesh.shape();
  const Options& o = sim.options();
  PlotFrame f;
  f.dim = o.dim;
  f.time = sim.time();
  f.cycle = sim.steps_done();
  f.problem = to_string(o.problem);
  f.leaf_cells = s.cells;
  const int last = o.dim - 1;  // the direction the leaves are stacked along
  const auto& leaves = mesh.forest().leaves();
  f.cells = s.cells;
  f.cells[static_cast<std::size_t>(last)] *= static_cast<int>(leaves.size());
  f.spacing = mesh.cell_size(0);
  f.origin = s.domain_lo;
  for (const BlockKey& leaf : leaves) {
    PlotLeaf l;
    l.level = leaf.level;
    l.spacing = mesh.cell_size(leaf.level);
    for (std::size_t a = 0; a < 3; ++a)
      l.origin[a] = s.domain_lo[a] + static_cast<double>(leaf.position[a] * s.cells[a]) * l.spacing[a];
    f.leaves.push_back(l);
  }
  // This rank's leaves are a run of the Morton order: one box of the stacked datasets.
  const auto& own = mesh.own_leaves();
  if (!own.empty()) {
    PlotBox box;
    box.hi = s.cells;
    const int first = mesh.forest().leaf_index(own.front());
    box.lo[static_cast<std::size_t>(last)] = first * s.cells[static_cast<std::size_t>(last)];
    box.hi[static_cast<std::size_t>(last)] =
        (first + static_cast<int>(own.size())) * s.cells[static_cast<std::size_t>(last)];
    f.boxes.push_back(box);
  }
  // The cells in the datasets' order: leaf by leaf, x fastest within each.
  struct Cell {
    int block;
    std::ptrdiff_t offset;  // of variable 0
  };
  std::vector<Cell> cells;
  std::vector<double> level;
  for (int b = 0; b < static_cast<int>(own.size()); ++b) {
    const BlockArray& a = mesh.array(b);
    for (int k = 0; k < s.cells[2]; ++k)
      for (int j = 0; j < s.cells[1]; ++j)
        for (int i = 0; i < s.cells[0]; ++i) {
          cells.push_back(
              {b, (i + s.guard[0]) * a.stride[1] + (j + s.guard[1]) * a.stride[2] + (k + s.guard[2]) * a.stride[3]});
          level.push_back(own[static_cast<std::size_t>(b)].level);
        }
  }
  const int state = sim.state();
  add_flow_variables(f, cells.size(), o.gamma, [&](std::size_t c, int var) {
    const BlockArray& a = mesh.array(cells[c].block);
    return a.data[(state + var) * a.stride[0] + cells[c].offset];
  });
  f.variables.push_back({"level", "refinement level of the cell's block (0: the root blocks)", "1", std::move(level)});
  return f;
}

PlotRun plot_run(const AmrSimulation& sim) {
  return PlotRun{&sim.options(), sim.communicator(), [&sim] { return sim.steps_done(); }, [&sim] { return sim.time(); },
                 [&sim] { return plot_frame(sim); }};
}

}  // namespace korch::hydro
