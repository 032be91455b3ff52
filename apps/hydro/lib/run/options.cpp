// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-hydro's options and command line (see options.hpp).
#include "options.hpp"

#include <CLI/CLI.hpp>

#include <korch/cli/validators.hpp>
#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <fstream>

#if defined(__unix__)
#include <unistd.h>
#endif

namespace korch::hydro {

namespace {

// The machine's memory in bytes; 0 when unknown.
long double physical_memory() {
#if defined(__unix__) && defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) return static_cast<long double>(pages) * static_cast<long double>(page);
#endif
  return 0;
}

std::string bytes_text(long double bytes) {
  if (bytes >= 1024.0L * 1024 * 1024)
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes / (1024.0L * 1024 * 1024)));
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes / (1024.0L * 1024)));
}

// Counts in long double, so that no product can overflow before it is compared.
struct GridCount {
  long double blocks, cells, bytes;
};

GridCount count(const Options& o) {
  const long double b = o.blocks, c = o.cells_per_block, ext = c + 2.0L * guard_cells;
  const long double block_cells = o.dim == 3 ? ext * ext * ext : ext * ext;  // 2-D: no z guard planes
  const long double blocks = o.dim == 3 ? b * b * b : b * b;
  const long double cells = o.dim == 3 ? (b * c) * (b * c) * (b * c) : (b * c) * (b * c);
  return {blocks, cells, blocks * block_cells * n_grid_vars * static_cast<long double>(sizeof(double))};
}

// --config takes a built-in configuration's name or its alias (configuration_names.hpp); the
// validator's message names the value and every accepted name.
void add_config_option(CLI::App& app, Options& o) {
  app.add_option_function<std::string>(
         "--config", [&o](const std::string& v) { o.config = parse_configuration(v); },
         "runtime configuration, the built-in's name (korch-configurations) or its alias: " + configuration_names())
      ->type_name("NAME")
      ->default_str(builtin_name(o.config))
      ->check(CLI::Validator(
          [](std::string& v) { return configuration_named(v) ? std::string() : unknown_configuration(v); }, "",
          "configuration"));
}

// How device packets are made and run, and how split shares the blocks: --packet-blocks,
// --device-kernel and --split-even.
void add_packet_options(CLI::App& app, Options& o) {
  app.add_option(
         "--packet-blocks", o.packet_blocks,
         "blocks per device packet (with gpu_only, cpu_gpu_data_parallel or cpu_gpu_action_parallel); "
         "auto: on GPU builds packets of at least 2^20 cells but no more than the rank's blocks over --threads, "
         "2 elsewhere")
      ->type_name("N|auto")
      ->default_str("auto")
      ->transform(CLI::Validator(
          [](std::string& v) {
            if (v == "auto") {
              v = "0";  // Options::packet_blocks 0: chosen by device_packet_blocks()
              return std::string();
            }
            const std::string given = v;
            if (!korch::cli::integer()(v).empty() || !korch::cli::within(1, INT_MAX)(v).empty())
              return fmt::format("'{}' is neither a count of blocks (1 or more) nor auto", given);
            return std::string();
          },
          "", "packet blocks"));
  app.add_option_function<std::string>(
         "--device-kernel",
         [&o](const std::string& v) {
           o.device_kernel = v == "fused"    ? DeviceKernel::fused
                             : v == "staged" ? DeviceKernel::staged
                                             : DeviceKernel::faces;
         },
         "device packets' kernels on CUDA and HIP builds: faces (a flux kernel per direction, then the update), "
         "fused (one kernel) or staged (every cell's half-step prediction once, then the faces' fluxes, then the "
         "update); the same results")
      ->type_name("NAME")
      ->default_str("faces")
      ->check(korch::cli::one_of({"faces", "fused", "staged"}));
  app.add_flag("--split-even", o.split_even,
               "with --config split: half the blocks to each side every step (default: each side's share follows "
               "the rate it was measured at in the steps before, from 1 block in 16 on the host where the device "
               "is a GPU)");
}

// The adaptive mesh's options.
void validate_adaptive(const Options& o) {
  if (o.max_level < 0 || o.max_level > 8)
    throw Error::format("option --max-level: {} is out of range: use 0 (uniform) to 8", o.max_level);
  if (o.max_level == 0) return;
  if (o.cells_per_block % 2 != 0 || o.cells_per_block < 2 * guard_cells)
    throw Error::format(
        "option --cells-per-block: {} with --max-level: a refined block splits its cells in halves and a "
        "guard layer lies within one neighbour, so use an even number of at least {}",
        o.cells_per_block, 2 * guard_cells);
  if (!(o.derefine_below >= 0 && o.derefine_below < o.refine_above && o.refine_above <= 1))
    throw Error::format(
        "options --derefine-below {} and --refine-above {}: give 0 <= derefine-below < refine-above <= 1 "
        "(Löhner estimates lie in [0, 1])",
        o.derefine_below, o.refine_above);
  if (o.regrid_every < 1) throw Error::format("option --regrid-every: {}: use 1 or more", o.regrid_every);
  if (o.balance != "cost" && o.balance != "count")
    throw Error::format("option --balance: '{}' is not a way to share blocks: use cost or count", o.balance);
}

}  // namespace

const char* to_string(Problem problem) noexcept {
  switch (problem) {
    case Problem::sedov: return "sedov";
    case Problem::sod_x: return "sod-x";
    case Problem::sod_y: return "sod-y";
    case Problem::sod_z: return "sod-z";
    case Problem::wave: return "wave";
  }
  return "?";
}

double default_tmax(Problem problem) {
  switch (problem) {
    case Problem::sedov: return 0.05;
    case Problem::wave: return 0.25;
    default: return 0.2;
  }
}

void validate(const Options& o) {
  if (o.dim != 2 && o.dim != 3) throw Error::format("option --dim: {} is not supported: use 2 or 3", o.dim);
  if (o.threads < 1 || o.threads > 64)
    throw Error::format("option --threads: {} is out of range: use 1 to 64", o.threads);
  if (o.blocks < 1) throw Error::format("option --blocks: {} blocks per direction: use 1 or more", o.blocks);
  if (o.cells_per_block < guard_cells)
    throw Error::format("option --cells-per-block: {} is below the stencil's {} guard cells: use {} or more",
                        o.cells_per_block, guard_cells, guard_cells);
  if (o.tile < 0 || o.tile > o.cells_per_block)
    throw Error::format("option --tile: {} must be between 1 and --cells-per-block ({}), or 0 for whole blocks", o.tile,
                        o.cells_per_block);
  if (o.tile > 0 && o.config == HydroConfiguration::device)
    throw Error(
        "option --tile makes no sense with --config gpu_only (device): the device team processes whole blocks "
        "in packets; use --packet-blocks, or --config cpu_only, cpu_gpu_data_parallel or cpu_gpu_action_parallel");
  if (!o.operation.empty()) {
    if (o.config != HydroConfiguration::cpu)
      throw Error::format(
          "option --config {} makes no sense with --plan or --operation: the planner chooses the teams; "
          "leave --config out",
          builtin_name(o.config));
    if (o.inject_failure >= 0)
      throw Error("option --inject-failure works on the hand-bundled step only: leave out --plan and --operation");
  }
  if (o.packet_blocks < 0) throw Error::format("option --packet-blocks: {}: use 1 or more, or auto", o.packet_blocks);
  if (o.steps < 0) throw Error::format("option --steps: {}: use 1 or more", o.steps);
  if (o.tmax < 0) throw Error::format("option --tmax: {}: use a positive time", o.tmax);
  if (o.steps > 0 && o.tmax > 0)
    throw Error(
        "options --steps and --tmax make no sense together: give one (--steps N runs N steps, --tmax T runs to time "
        "T)");
  if (o.problem == Problem::sod_z && o.dim != 3)
    throw Error("option --problem sod-z makes no sense with --dim 2: use --dim 3 or sod-x / sod-y");
  if (o.conduction < 0)
    throw Error::format("option --conduction: kappa {} is negative: use a positive value", o.conduction);
  if (!(o.cfl > 0 && o.cfl <= 1.0)) throw Error::format("option --cfl: {} is out of range (0, 1]", o.cfl);
  if (!(o.gamma > 1.0)) throw Error::format("gamma {} must exceed 1", o.gamma);
  // The block count in long double: --blocks may be as large as an int holds, its cube is not.
  // With levels, the leaves at the first step are known only once the mesh is made
  // (AmrSimulation checks then); there the bound is the finest level's blocks.
  const long double blocks = count(o).blocks * std::pow(2.0L, static_cast<long double>(o.dim * o.max_level));
  if (o.inject_failure >= 0 && o.inject_failure >= blocks && o.max_level > 0)
    throw Error::format("option --inject-failure: leaf {} does not exist: the mesh has at most {:.0f} leaves",
                        o.inject_failure, static_cast<double>(blocks));
  if (o.inject_failure >= 0 && o.inject_failure >= blocks)
    throw Error::format("option --inject-failure: block {} does not exist: the grid has blocks 0..{:.0f}",
                        o.inject_failure, static_cast<double>(blocks - 1));
  validate_adaptive(o);
  if (o.problem == Problem::sedov && o.boundary == Boundary::periodic && o.blocks % 2 != 0 &&
      o.cells_per_block % 2 != 0)
    throw Error::format(
        "options --problem sedov and --boundary periodic need an even number of cells per direction, "
        "not --blocks {} x --cells-per-block {}: make one of them even",
        o.blocks, o.cells_per_block);
}

void add_options(CLI::App& app, Options& o) {
  using korch::cli::add_integer;
  using korch::cli::add_real;
  using korch::cli::one_of;
  add_config_option(app, o);
  add_integer(app, "--threads", o.threads, "threads per team", 1, 64);
  add_integer(app, "--tile", o.tile, "tile cells per direction on host teams (default: whole blocks)", 1)
      ->default_str("");
  add_packet_options(app, o);
  add_integer(app, "--blocks", o.blocks, "blocks per direction", 1);
  add_integer(app, "--cells-per-block", o.cells_per_block, "interior cells per block and direction", guard_cells);
  add_integer(app, "--steps", o.steps, "run N steps (default: run to --tmax)", 1)->default_str("");
  add_real(app, "--tmax", o.tmax, "run to time X (default: the problem's end time)", 0.0, HUGE_VALL, true)
      ->default_str("");
  app.add_option_function<std::string>(
         "--problem",
         [&o](const std::string& v) {
           o.problem = v == "sod-x"   ? Problem::sod_x
                       : v == "sod-y" ? Problem::sod_y
                       : v == "sod-z" ? Problem::sod_z
                       : v == "wave"  ? Problem::wave
                                      : Problem::sedov;
         },
         "sedov, sod-x, sod-y, sod-z or wave")
      ->type_name("NAME")
      ->default_str(to_string(o.problem))
      ->check(one_of({"sedov", "sod-x", "sod-y", "sod-z", "wave"}));
  add_integer(app, "--dim", o.dim, "dimensions: 2 or 3", 2, 3);
  app.add_option_function<std::string>(
         "--boundary",
         [&o](const std::string& v) { o.boundary = v == "periodic" ? Boundary::periodic : Boundary::outflow; },
         "periodic or outflow (default: periodic for wave, outflow otherwise)")
      ->type_name("NAME")
      ->check(one_of({"periodic", "outflow"}));
  app.add_option_function<std::string>(
         "--limiter", [&o](const std::string& v) { o.limiter = v == "minmod" ? Limiter::minmod : Limiter::mc; },
         "slope limiter: minmod or mc")
      ->type_name("NAME")
      ->default_str(o.limiter == Limiter::minmod ? "minmod" : "mc")
      ->check(one_of({"minmod", "mc"}));
  add_real(app, "--cfl", o.cfl, "CFL number, in (0, 1]", 0.0, 1.0, true);
  add_real(app, "--conduction", o.conduction,
           "implicit thermal conduction between cycles with conductivity KAPPA (default off)", 0.0, HUGE_VALL, true)
      ->type_name("KAPPA")
      ->default_str("");
  app.add_option("--out", o.out, "folder for density.png, trace.json and timeline.png")
      ->type_name("DIR")
      ->check(korch::cli::non_empty());
  app.add_flag("--log", o.log_scale, "logarithmic colour scale in density.png");
  app.add_flag("--host-parallel", o.host_parallel,
               "the first step's CFL reduction on OpenMP instead of Serial (later steps take their dt from the cycle)");
  app.add_flag("--quiet", o.quiet, "no progress bar");
  add_integer(app, "--checkpoint-every", o.checkpoint_every,
              "write OUT/checkpoint.bin every N steps (and on SIGINT or SIGTERM); 0: only on those signals", 0);
  app.add_option("--restart", o.restart,
                 "continue the run saved in this checkpoint file (same problem and grid; --steps and --tmax count "
                 "from step 0)")
      ->type_name("FILE");
  add_integer(app, "--inject-failure", o.inject_failure,
              "make the hydro action throw on global block N at the first step (with --max-level: the leaf N "
              "along the Morton curve) to see how a failure stops every rank (default: none)",
              0)
      ->default_str("");
  auto* plan = app.add_flag_callback(
      "--plan", [&o] { o.operation = "builtin"; },
      "run each step from the planner's plan of the built-in operation (apps/hydro/hydro_operation.json) "
      "instead of the hand-bundled step; the state is bitwise the same");
  app.add_option("--operation", o.operation,
                 "like --plan, with the operation read from FILE (the built-in one's variables and action names; "
                 "builtin: the built-in one)")
      ->type_name("FILE")
      ->check(korch::cli::non_empty())
      ->excludes(plan);
  add_plot_options(app, o.plot);
  add_adaptive_options(app, o);
}

void add_adaptive_options(CLI::App& app, Options& o) {
  using korch::cli::add_integer;
  using korch::cli::add_real;
  add_integer(app, "--max-level", o.max_level,
              "levels of refinement above the root blocks: an adaptive mesh that follows the flow (0: uniform)", 0, 8);
  add_real(app, "--refine-above", o.refine_above, "refine a block whose Löhner estimate exceeds X (with --max-level)",
           0.0, 1.0, false);
  add_real(app, "--derefine-below", o.derefine_below,
           "merge blocks whose Löhner estimates all lie below X (with --max-level)", 0.0, 1.0, false);
  add_integer(app, "--regrid-every", o.regrid_every, "steps between regrids (with --max-level)", 1);
  app.add_option("--balance", o.balance,
                 "how regrids share the blocks among ranks along the Morton curve: cost (each block's measured "
                 "update time) or count (with --max-level)")
      ->type_name("NAME")
      ->check(korch::cli::one_of({"cost", "count"}))
      ->capture_default_str();
}

void check_options(const CLI::App& app, const Options& o) {
  if (app.count("--packet-blocks") > 0 && o.config == HydroConfiguration::cpu)
    throw Error(
        "option --packet-blocks makes no sense with --config cpu_only (cpu): no packets are built; use --config "
        "gpu_only, cpu_gpu_data_parallel or cpu_gpu_action_parallel");
  if (!o.operation.empty() && o.operation != "builtin" && !std::ifstream(o.operation))
    throw Error::format(
        "option --operation: file '{}' cannot be read: give an operation file (docs/planner.md), or --plan "
        "for the built-in one",
        o.operation);
  if (app.count("--packet-blocks") > 0 && !o.operation.empty())
    throw Error(
        "option --packet-blocks makes no sense with --plan or --operation: the plan builds no packets; leave it out");
  if (o.split_even && o.config != HydroConfiguration::split)
    throw Error::format(
        "option --split-even makes no sense with --config {}: only split shares the blocks; leave it out",
        builtin_name(o.config));
  if (app.count("--device-kernel") > 0 &&
      (o.config == HydroConfiguration::cpu || !o.operation.empty() || o.max_level > 0))
    throw Error(
        "option --device-kernel makes no sense with --config cpu_only (cpu), --plan, --operation or --max-level: only "
        "the uniform grid's device packets run these kernels; leave it out");
  for (const char* option : {"--refine-above", "--derefine-below", "--regrid-every"})
    if (app.count(option) > 0 && o.max_level == 0)
      throw Error::format("option {} makes no sense without --max-level: the grid is uniform; give --max-level N",
                          option);
  validate(o);
  check_plot_options(o.plot);
  // A run of --steps has no end time known before it runs: its steps bound its plots.
  check_plot_interval(o.plot, 0.0, o.steps > 0 ? 0.0 : (o.tmax > 0 ? o.tmax : default_tmax(o.problem)));
  check_grid_size(o);
}

Options parse_options(const std::vector<std::string>& args, bool* help) {
  Options o;
  CLI::App app("korch-hydro", "korch-hydro");
  add_options(app, o);
  if (help) *help = false;
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    if (help) *help = true;
    return Options{};
  } catch (const CLI::ParseError& e) {
    throw Error(e.what());
  }
  check_options(app, o);
  return o;
}

std::string GridSize::text() const {
  return fmt::format("the grid: {} cells in {} blocks, {}", cells, blocks, bytes_text(static_cast<long double>(bytes)));
}

GridSize grid_size(const Options& o) {
  check_grid_size(o);
  const GridCount n = count(o);
  return {static_cast<std::int64_t>(n.blocks), static_cast<std::int64_t>(n.cells), static_cast<std::int64_t>(n.bytes)};
}

void check_grid_size(const Options& o) {
  const GridCount n = count(o);
  const std::string shape = fmt::format("{}^{} blocks of {}^{} cells", o.blocks, o.dim, o.cells_per_block, o.dim);
  if (n.cells > INT_MAX || n.blocks > INT_MAX)
    throw Error::format(
        "options --blocks and --cells-per-block: {} make {:.4g} cells, more than {} (the grid counts "
        "cells in int): use fewer blocks or cells per block",
        shape, static_cast<double>(n.cells), INT_MAX);
  const long double memory = physical_memory();
  if (memory > 0 && n.bytes > memory)
    throw Error::format(
        "options --blocks and --cells-per-block: {} need {} for the grid alone, more than this "
        "machine's {}: use fewer blocks or cells per block",
        shape, bytes_text(n.bytes), bytes_text(memory));
}

}  // namespace korch::hydro
