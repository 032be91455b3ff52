// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-hydro's options and command line: korch::hydro::Options, its checks, the same as CLI11
// options (apps/cli), the checks that span several options, and the grid's size, checked before
// anything is allocated. Nothing here uses Kokkos, so the fuzz target (unit_tests/fuzz) links it alone.
#pragma once

#include "configuration_names.hpp"
#include "euler_constants.hpp"
#include "plot_options.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace korch::hydro {

enum class Problem { sedov, sod_x, sod_y, sod_z, wave };
enum class Boundary { periodic, outflow };

const char* to_string(Problem problem) noexcept;

struct Options {
  HydroConfiguration config = HydroConfiguration::cpu;  // --config (configuration_names.hpp)
  unsigned threads = 2;                                 // threads per team
  int tile = 0;                                         // tile cells per direction; 0: whole block
  int packet_blocks = 0;                                // blocks per device packet; 0: device_packet_blocks()
  DeviceKernel device_kernel = DeviceKernel::faces;     // device packets' kernels on GPU builds
  bool split_even = false;   // split: half the blocks each side every step, not shares by throughput
  int blocks = 4;            // blocks per direction
  int cells_per_block = 32;  // interior cells per block per direction
  int steps = 0;             // 0: run to tmax
  double tmax = 0.0;         // 0: the problem's default end time (when steps == 0)
  Problem problem = Problem::sedov;
  int dim = 2;
  std::string out = "out";
  bool quiet = false;
  double conduction = 0.0;  // kappa; 0: off
  double cfl = 0.4;
  double gamma = 1.4;
  Limiter limiter = Limiter::mc;
  std::optional<Boundary> boundary;  // default: periodic for wave, outflow otherwise
  int trace_cycles = 3;              // cycles kept for trace.json / timeline.png
  bool write_output = true;          // pictures + trace (the CLI); tests turn it off
  bool host_parallel = false;        // between-cycle work on DefaultHostExecutionSpace (else Serial)
  bool log_scale = false;            // logarithmic colour scale in density.png (--log)
  int inject_failure = -1;           // global block whose hydro action throws in the first step; -1: none
  int checkpoint_every = 0;          // steps between checkpoints (out/checkpoint.bin); 0: none
  std::string restart;               // checkpoint file to continue from; empty: start at step 0
  PlotOptions plot;                  // HDF5/XDMF plot files (plot_writer.hpp); default: none
  // Run each step from the plan of this operation file (hydro_operation.hpp; "builtin": the one
  // compiled in, what --plan gives) instead of the hand-bundled step; empty: hand-bundled.
  std::string operation;
  // Adaptive mesh (docs/adaptive-mesh.md, "The hydro job"): levels of refinement above the root
  // blocks (--blocks per direction); 0: the uniform grid.
  int max_level = 0;
  double refine_above = 0.8;    // Löhner estimate above which a leaf is refined
  double derefine_below = 0.2;  // ... below which a family of leaves is merged
  int regrid_every = 4;         // steps between regrids
  // How regrids share the leaves among ranks along the Morton curve: "cost", by each leaf's
  // measured update time since the last regrid; "count", the same number of leaves per rank.
  std::string balance = "cost";
};

// Checks an Options value (the command line below calls it; Simulation too); throws
// korch::Error naming the option.
void validate(const Options& options);

// The default end time of a problem.
double default_tmax(Problem problem);

// Binds every option of korch-hydro to `options` (which must outlive the parse).
void add_options(CLI::App& app, Options& options);
// The adaptive mesh's options (--max-level and its thresholds); add_options calls it.
void add_adaptive_options(CLI::App& app, Options& options);
// After app.parse: checks that span options (--packet-blocks with --config cpu, validate(), the
// grid's size); throws korch::Error naming the option.
void check_options(const CLI::App& app, const Options& options);

// Parses a command line (without argv[0]) into Options, checks included; throws korch::Error
// naming the option for unknown options, bad values and options that make no sense together.
// "--help" sets *help (and returns the defaults).
Options parse_options(const std::vector<std::string>& args, bool* help = nullptr);

// The grid an Options value asks for, counted in 64 bits before anything is allocated.
struct GridSize {
  std::int64_t blocks = 0;   // blocks in the whole grid
  std::int64_t cells = 0;    // interior cells in the whole grid
  std::int64_t bytes = 0;    // the grid's host storage (all variables, guard cells included)
  std::string text() const;  // "the grid: 384 x 384 cells in 36 blocks, 25.1 MiB"
};
GridSize grid_size(const Options& options);
// Throws korch::Error naming --blocks / --cells-per-block when the grid has more cells than an int
// counts or needs more memory than the machine has.
void check_grid_size(const Options& options);

}  // namespace korch::hydro
