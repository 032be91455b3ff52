// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// When and where korch-hydro writes plot files (HDF5 + XDMF, plot_file.hpp): the --plot-every,
// --plot-dir and --plot-prefix options and the schedule they make. Free of Kokkos and HDF5, so
// that the command line compiles without either.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace korch::hydro {

struct PlotOptions {
  int every_steps = 0;      // a plot every N steps; 0: not counted in steps
  double every_time = 0.0;  // a plot every T of simulation time; 0: not counted in time
  std::string dir;          // empty: the run's --out folder
  std::string prefix = "plot";
  bool enabled() const noexcept { return every_steps > 0 || every_time > 0.0; }
};

// Reads --plot-every's value: "N" (steps, N >= 1) or "Tt" (simulation time, T > 0, e.g. "0.01t").
// Throws korch::Error naming --plot-every and both forms otherwise.
PlotOptions parse_plot_every(const std::string& text);

// The most plots a run may write on a time interval (--plot-every Tt): each is a file.
constexpr double max_plots_in_time = 100000;

// Throws korch::Error naming --plot-every when plots counted in simulation time would number more
// than max_plots_in_time from `start` to `end` (end 0: not known, a run of --steps), or when the
// interval is below 1e-9 of the run's times (at least 1e-9): the schedule could no longer tell one
// plot time from the next, nor a step from none.
void check_plot_interval(const PlotOptions& plot, double start, double end);

// Binds --plot-every, --plot-dir and --plot-prefix to `plot`.
void add_plot_options(CLI::App& app, PlotOptions& plot);

// Whether this build writes plot files (it found HDF5), and the reason when it does not.
bool plot_files_supported() noexcept;
// Throws korch::Error naming --plot-every when plots are asked for but the build has no HDF5, and
// naming --plot-prefix when the prefix is not a plain file name.
void check_plot_options(const PlotOptions& plot);

// Which steps end with a plot: the first state, then every `every_steps` steps or each time the
// simulation time reaches the next multiple of `every_time` (the step before it is shortened to
// land on it), and the last state of the run.
class PlotSchedule {
 public:
  PlotSchedule(const PlotOptions& plot, int first_step, double first_time);
  // Throws as check_plot_interval(plot, first_time, 0) does (a restart's time may be large).
  // The longest step that does not pass the next plot time (1e300 when plots count steps).
  double max_dt(double time) const;
  // Whether the state after a step that ended at (steps, time) is due for a plot; moves the
  // schedule past it when it is.
  bool due(int steps, double time);

 private:
  PlotOptions plot_;
  int first_step_;
  double first_time_;
  long long next_time_index_;  // the next plot time is first_time_ + index * every_time
};

}  // namespace korch::hydro
