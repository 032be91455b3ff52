// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-hydro's plot options and schedule (see plot_options.hpp).
#include "plot_options.hpp"

#include <korch/error.hpp>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace korch::hydro {

namespace {

constexpr const char* kEveryForms =
    "give N (a plot every N steps, e.g. 10) or Tt (every T of simulation time, e.g. 0.01t)";

bool plain_decimal(const std::string& text, bool integer) {
  if (text.empty()) return false;
  bool digits = false, point = false, exponent = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9')
      digits = true;
    else if (c == '.' && !integer && !point && !exponent)
      point = true;
    else if ((c == 'e' || c == 'E') && !integer && digits && !exponent)
      exponent = true;
    else if ((c == '+' || c == '-') && i > 0 && (text[i - 1] == 'e' || text[i - 1] == 'E'))
      continue;
    else
      return false;
  }
  return digits;
}

}  // namespace

PlotOptions parse_plot_every(const std::string& text) {
  PlotOptions plot;
  const bool in_time = !text.empty() && text.back() == 't';
  const std::string number = in_time ? text.substr(0, text.size() - 1) : text;
  if (!plain_decimal(number, !in_time))
    throw Error::format("option --plot-every: '{}' is not a plot interval: {}", text, kEveryForms);
  if (in_time) {
    char* end = nullptr;
    plot.every_time = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !(plot.every_time > 0.0) || !std::isfinite(plot.every_time))
      throw Error::format("option --plot-every: '{}' is not a positive finite time: {}", text, kEveryForms);
  } else {
    const long long n = std::strtoll(number.c_str(), nullptr, 10);
    if (n < 1 || n > 1'000'000'000)
      throw Error::format("option --plot-every: '{}' steps is not in 1..1000000000: {}", text, kEveryForms);
    plot.every_steps = static_cast<int>(n);
  }
  return plot;
}

void add_plot_options(CLI::App& app, PlotOptions& plot) {
  app.add_option_function<std::string>(
         "--plot-every",
         [&plot](const std::string& v) {
           const PlotOptions every = parse_plot_every(v);
           plot.every_steps = every.every_steps;
           plot.every_time = every.every_time;
         },
         "write HDF5 plot files with XDMF (ParaView, VisIt): N = every N steps, Tt = every T of simulation "
         "time (e.g. 10 or 0.01t); the first and last states too")
      ->type_name("N|Tt")
      ->check(CLI::Validator(
          [](std::string& v) {
            try {
              parse_plot_every(v);
            } catch (const Error& e) {
              return std::string(e.what()).substr(std::string("option --plot-every: ").size());
            }
            return std::string();
          },
          "", "plot interval"));
  app.add_option("--plot-dir", plot.dir, "folder for the plot files (default: --out)")->type_name("DIR");
  app.add_option("--plot-prefix", plot.prefix,
                 "plot file names: PREFIX_<step>.h5 and .xmf, and PREFIX.xmf for the whole series")
      ->type_name("NAME")
      ->default_str(plot.prefix);
}

void check_plot_options(const PlotOptions& plot) {
  if (plot.prefix.empty() || plot.prefix.find('/') != std::string::npos || plot.prefix[0] == '.')
    throw Error::format("option --plot-prefix: '{}' is not a plain file name (no '/', not empty, no leading '.')",
                        plot.prefix);
  if (plot.enabled() && !plot_files_supported())
    throw Error(
        "option --plot-every: this korch-hydro was built without HDF5, so it cannot write plot files: "
        "install libhdf5-dev (libhdf5-openmpi-dev for an MPI build) and configure again");
}

void check_plot_interval(const PlotOptions& plot, double start, double end) {
  if (!(plot.every_time > 0.0)) return;
  const double resolution = 1e-9 * std::max({1.0, std::fabs(start), std::fabs(end)});
  if (plot.every_time < resolution)
    throw Error::format(
        "option --plot-every: {}t is below the smallest plot interval {}t for simulation times up to {}: "
        "use a longer interval, or --plot-every N to count steps",
        plot.every_time, resolution, std::max(std::fabs(start), std::fabs(end)));
  const double plots = (end - start) / plot.every_time;
  if (end > start && plots > max_plots_in_time)
    throw Error::format(
        "option --plot-every: {}t makes {:.3g} plots from t = {} to {}, more than {:.0f}: use a longer "
        "interval, or --plot-every N to count steps",
        plot.every_time, plots, start, end, max_plots_in_time);
}

PlotSchedule::PlotSchedule(const PlotOptions& plot, int first_step, double first_time)
    : plot_(plot), first_step_(first_step), first_time_(first_time), next_time_index_(1) {
  check_plot_interval(plot, first_time, 0.0);
}

double PlotSchedule::max_dt(double time) const {
  if (plot_.every_time <= 0.0) return 1e300;
  return first_time_ + static_cast<double>(next_time_index_) * plot_.every_time - time;
}

bool PlotSchedule::due(int steps, double time) {
  if (plot_.every_steps > 0) return (steps - first_step_) % plot_.every_steps == 0;
  if (plot_.every_time <= 0.0) return false;
  const double next = first_time_ + static_cast<double>(next_time_index_) * plot_.every_time;
  // A step shortened to land on the plot time ends there up to rounding.
  if (time < next - 1e-12 * std::max(1.0, std::fabs(next))) return false;
  // The first plot time beyond this one, found by division (a loop over the intervals passed
  // could be long), then moved by whole intervals where the division rounded.
  const double reached = time + 1e-12 * std::max(1.0, std::fabs(time));
  const auto beyond = [&](long long index) {
    return first_time_ + static_cast<double>(index) * plot_.every_time > reached;
  };
  long long index = std::max(next_time_index_ + 1,
                             static_cast<long long>(std::floor((reached - first_time_) / plot_.every_time)) + 1);
  while (index > next_time_index_ + 1 && beyond(index - 1)) --index;
  while (!beyond(index)) ++index;
  next_time_index_ = index;
  return true;
}

}  // namespace korch::hydro
