// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// --plot-every Tt within bounds: an interval that would make more than max_plots_in_time plots, or
// one below what the simulation time resolves, is refused naming the option (korch-hydro exits 2)
// instead of a run that never ends; the schedule moves past many plot times at once.
#include "options.hpp"
#include "plot_options.hpp"

#include <korch/error.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

using namespace korch::hydro;

namespace {

PlotOptions every(double t) {
  PlotOptions p;
  p.every_time = t;
  return p;
}

std::string interval_error(double t, double start, double end) {
  try {
    check_plot_interval(every(t), start, end);
  } catch (const korch::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("hydro plot interval: too many plots or an interval below the time's resolution names --plot-every") {
  CHECK(interval_error(0.001, 0.0, 0.05).empty());
  CHECK(interval_error(1e-6, 0.0, 0.05).empty());  // 50000 plots
  const std::string many = interval_error(1e-7, 0.0, 1.0);
  CHECK(many.find("option --plot-every") == 0);
  CHECK(many.find("1e+07 plots") != std::string::npos);
  for (const double tiny : {1e-300, 5e-324, 1e-10}) {
    CAPTURE(tiny);
    const std::string e = interval_error(tiny, 0.0, 0.0);  // a run of --steps: no end time
    CHECK(e.find("option --plot-every") == 0);
    CHECK(e.find("smallest plot interval") != std::string::npos);
  }
  // A restart at a late time: the same interval no longer resolves.
  CHECK(interval_error(1e-6, 0.0, 0.0).empty());
  CHECK(interval_error(1e-6, 1e4, 0.0).find("smallest plot interval") != std::string::npos);
  CHECK_THROWS_AS(PlotSchedule(every(1e-6), 10, 1e4), korch::Error);
  CHECK(interval_error(0.0, 0.0, 1.0).empty());  // plots counted in steps
}

TEST_CASE("hydro plot interval: the command line refuses what the hostile user gave, before anything runs") {
  if (!plot_files_supported()) return;  // --plot-every is refused for the missing HDF5 first
  const std::vector<std::vector<std::string>> refused = {{"--plot-every", "1e-300t"},
                                                         {"--plot-every", "1e-300t", "--steps", "10"},
                                                         {"--plot-every", "1e-7t", "--tmax", "1"},
                                                         {"--plot-every", "1e-7t", "--problem", "wave"}};
  for (const auto& args : refused) {
    CAPTURE(args[1]);
    CHECK_THROWS_WITH_AS(parse_options(args), doctest::Contains("option --plot-every"), korch::Error);
  }
  CHECK_NOTHROW(parse_options({"--plot-every", "0.001t"}));
  CHECK_NOTHROW(parse_options({"--plot-every", "1e-6t", "--steps", "5"}));
}

TEST_CASE("hydro plot interval: a step past many plot times moves the schedule at once, to the next one") {
  PlotSchedule s(every(1e-9), 0, 0.0);
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(s.due(1, 10.0));  // 1e10 intervals later: one plot, found without walking over them
  // Walking them would take tens of seconds; a loaded machine may hold this thread for a few
  // scheduler slices.
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  CHECK(s.max_dt(10.0) == doctest::Approx(1e-9).epsilon(1e-3));
  CHECK_FALSE(s.due(2, 10.0 + 0.5e-9));
  CHECK(s.due(3, 10.0 + 1e-9));
}
