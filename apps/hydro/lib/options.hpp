// korch-hydro's command line: korch::hydro::Options as CLI11 options (apps/cli), the checks that
// span several options, and the grid's size, checked before anything is allocated.
#pragma once

#include "simulation.hpp"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace korch::hydro {

// Binds every option of korch-hydro to `options` (which must outlive the parse).
void add_options(CLI::App& app, Options& options);
// After app.parse: checks that span options (--packet-blocks with --config cpu, validate(), the
// grid's size); throws korch::Error naming the option.
void check_options(const CLI::App& app, const Options& options);

// Parses a command line (without argv[0]) into Options, checks included; throws korch::Error
// naming the option for unknown options, bad values and options that make no sense together.
// "--help" sets *help (and returns the defaults).
Options parse_options(const std::vector<std::string>& args, bool* help = nullptr);

// The grid an Options value asks for, counted in 64 bits before anything is allocated.
struct GridSize {
  std::int64_t blocks = 0;  // blocks in the whole grid
  std::int64_t cells = 0;   // interior cells in the whole grid
  std::int64_t bytes = 0;   // the grid's host storage (all variables, guard cells included)
  std::string text() const; // "the grid: 384 x 384 cells in 36 blocks, 25.1 MiB"
};
GridSize grid_size(const Options& options);
// Throws korch::Error naming --blocks / --cells-per-block when the grid has more cells than an int
// counts or needs more memory than the machine has.
void check_grid_size(const Options& options);

}  // namespace korch::hydro
