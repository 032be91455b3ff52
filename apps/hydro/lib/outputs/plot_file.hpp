// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Plot files of the hydro app: one HDF5 file per output with every variable of the whole grid, and
// an XDMF file beside it that tells ParaView and VisIt how to read it (docs/plot-files.md).
//
// Layout: each variable is one dataset over the whole domain, cell-centred, C order with x fastest
// ([ny][nx] in 2-D, [nz][ny][nx] in 3-D), the mesh a uniform rectilinear grid given by origin and
// spacing. Each rank writes the cells of its blocks into the shared datasets as hyperslabs, all
// ranks together (collective MPI-IO) where the build has parallel HDF5; the file is the same
// whatever the number of ranks. The file is written under a temporary name and renamed
// (output_files.hpp), so a reader never sees half a plot.
#pragma once

#include <korch/communicator.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace korch::hydro {

// Global cell indices [lo, hi) per direction (z: [0, 1) in 2-D).
struct PlotBox {
  std::array<int, 3> lo{}, hi{};
};

struct PlotVariable {
  std::string name;       // the dataset's name, e.g. "density"
  std::string long_name;  // what it is, e.g. "mass density"
  std::string units;      // in the problem's code units, e.g. "mass / length^3"
  // This rank's cells (those of `boxes`) in ascending global index i + nx * (j + ny * k).
  std::vector<double> values;
};

// Where one block of an adaptive mesh lies: its level and its lowest corner and cell size, x y z.
struct PlotLeaf {
  int level = 0;
  std::array<double, 3> origin{}, spacing{1, 1, 1};
};

struct PlotFrame {
  int dim = 2;
  std::array<int, 3> cells{1, 1, 1};  // whole grid, x y z (z: 1 in 2-D)
  // x y z; in 2-D, z is the one-cell slab the run computes on (the XDMF mesh is that slab).
  std::array<double, 3> origin{}, spacing{1, 1, 1};
  double time = 0.0;
  int cycle = 0;  // steps done
  std::string problem;
  std::vector<PlotBox> boxes;  // this rank's part of the grid
  std::vector<PlotVariable> variables;
  // An adaptive mesh: every leaf (every rank's), in the order their cells are stacked along the
  // last direction of `cells`; the XDMF then describes one grid per leaf. Empty for a uniform grid.
  std::vector<PlotLeaf> leaves;
  std::array<int, 3> leaf_cells{1, 1, 1};  // cells of each leaf, x y z
};

// Density, velocity components, pressure and total energy density of `n` cells into f.variables,
// from conserved(cell, var) (var 0..4: density, momentum x y z, energy).
void add_flow_variables(PlotFrame& f, std::size_t n, double gamma,
                        const std::function<double(std::size_t cell, int var)>& conserved);

// Writes `frame` to the HDF5 file `path` atomically; collective: every rank of `ranks` calls it
// with its own boxes and values. Throws korch::Error naming the file and HDF5's reason.
void write_plot_file(const std::string& path, const PlotFrame& frame, const Communicator& ranks);

// The XDMF <Grid> element of `frame`, its datasets read from `h5_name` (relative to the XDMF file).
std::string xdmf_grid(const PlotFrame& frame, const std::string& h5_name);
// An XDMF document holding `grids`; with `time_series` they form one temporal collection.
std::string xdmf_document(const std::vector<std::string>& grids, bool time_series);

}  // namespace korch::hydro
