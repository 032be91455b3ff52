// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which run a plot series belongs to: PREFIX.series beside PREFIX.xmf records the options that
// make a simulation (problem, grid, physics) and the steps plotted so far, so that a run continued
// from a checkpoint lists only its own earlier plots and refuses a folder holding another run's
// series (docs/plot-files.md, "Restarts").
#pragma once

#include "options.hpp"

#include <optional>
#include <string>
#include <vector>

namespace korch::hydro {

struct SeriesRecord {
  std::vector<std::pair<std::string, std::string>> identity;  // option, value (run_shaping_options' spelling)
  std::vector<int> cycles;                                    // the steps plotted, in order
};

// The options that make the simulation a series shows: those of run_shaping_options that fix the
// problem, the grid and the physics (not the steps, the outputs or where the work runs).
std::vector<std::pair<std::string, std::string>> series_identity(const Options& options);

std::string series_record_path(const std::string& folder, const std::string& prefix);
// Nothing when the file is absent; throws korch::Error naming the file when it cannot be read.
std::optional<SeriesRecord> read_series_record(const std::string& path);
void write_series_record(const std::string& path, const SeriesRecord& record);

// "" when both identities are the same run; else each difference: "--problem sod-x there, sedov here".
std::string series_difference(const SeriesRecord& there, const std::vector<std::pair<std::string, std::string>>& here);

}  // namespace korch::hydro
