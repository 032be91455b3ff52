// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The plot files of a run (plot_file.hpp) on the schedule of --plot-every (plot_options.hpp):
// PREFIX_<step>.h5 with PREFIX_<step>.xmf for each output, and PREFIX.xmf, the whole series as one
// temporal collection (open that one to step through time in ParaView or VisIt).
#pragma once

#include "plot_file.hpp"
#include "plot_options.hpp"

#include <functional>
#include <string>
#include <vector>

namespace korch::hydro {

class AmrSimulation;
class Simulation;
struct Options;

// The simulation's current state as a plot frame: density, velocity components, pressure and
// total energy density of this rank's cells, with the mesh, time and step count.
PlotFrame plot_frame(const Simulation& sim);
// The same for an adaptive mesh: the leaves' cells stacked leaf after leaf in Morton order along
// the last direction (y in 2-D, z in 3-D), each leaf's place in the domain in frame.leaves, and the
// level of each cell as one more variable (docs/plot-files.md, "Adaptive meshes").
PlotFrame plot_frame(const AmrSimulation& sim);

// What the plot writer needs of a run: its options, ranks, clock and current frame.
struct PlotRun {
  const Options* options = nullptr;
  Communicator comm;
  std::function<int()> steps_done;
  std::function<double()> time;
  std::function<PlotFrame()> frame;
};
PlotRun plot_run(const Simulation& sim);
PlotRun plot_run(const AmrSimulation& sim);

// The series file a run with `plot` and output folder `out` writes (PREFIX.xmf in the plot folder).
std::string plot_series_path(const PlotOptions& plot, const std::string& out);

class PlotWriter {
 public:
  // Prepares the folder and writes the first plot when plots are asked for; collective.
  explicit PlotWriter(PlotRun run);
  // The longest next step that does not pass the next plot time.
  double max_dt() const;
  // After each step: a plot when one is due; collective.
  void after_step();
  // At the end of the run: the last state, unless it was just written; collective.
  void finish();

  std::string folder() const;
  std::string h5_name(int cycle) const;  // file name without folder

 private:
  void write();
  // On rank 0 of a continued run: the earlier plots of this run's series (its PREFIX.series record
  // lists them) into series_; the reason to refuse when the folder holds another run's series.
  std::string continue_series();

  PlotRun run_;
  PlotOptions plot_;
  PlotSchedule schedule_;
  std::vector<std::string> series_;  // XDMF grids of the files written so far
  std::vector<int> cycles_;          // their steps
  int last_cycle_ = -1;
};

}  // namespace korch::hydro
