// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The benchmark programs' command lines (see bench_command_lines.hpp).
#include "bench_command_lines.hpp"

#include "task_graph.hpp"

#include <korch/cli/validators.hpp>

#include <algorithm>
#include <thread>

namespace korch::bench {

namespace {

// Drops repeats, keeping the first (comma lists given to --patterns and --drivers).
std::vector<std::string> unique(const std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (const auto& x : v)
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

}  // namespace

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& x : names) s += (s.empty() ? "" : ", ") + x;
  return s;
}

namespace {

// The GPU-only variants, for the help text.
std::string gpu_variants() {
  std::vector<std::string> gpu;
  for (const auto& name : hydro_bench_variant_names())
    if (hydro_bench_variant_needs_gpu(name)) gpu.push_back(name);
  return join_names(gpu);
}

}  // namespace

std::unique_ptr<cli::Program> dataflow_bench_command_line(DataflowBenchArgs& args) {
  auto program =
      std::make_unique<cli::Program>("korch-bench-dataflow",
                                     "a filter chain and an expander as dataflow pipelines against stage-at-a-time\n"
                                     "kernels, measured in the same run (items/s, ratios, lane utilization).");
  cli::add_integer(program->app(), "items", args.items, "input items", 1, 1LL << 30);
  cli::add_integer(program->app(), "width", args.width, "vector width, items per run", 1, 1024);
  cli::add_integer(program->app(), "repeats", args.repeats, "repetitions; the best is kept", 1);
  cli::add_integer(program->app(), "--team-size", args.team_size,
                   "lanes per pipeline instance (dataflow::Options::team_size; a power of two on GPUs; a width above "
                   "it gives each lane several items per run); 0: the library's default",
                   0, 1024);
  cli::add_real(program->app(), "--queue-scale", args.queue_scale,
                "queue capacity in upstream runs (dataflow::Options::queue_scale; smaller instances, more of them "
                "resident per multiprocessor)",
                1.0, 64.0);
  cli::add_integer(program->app(), "--instances", args.instances,
                   "pipeline instances, the kernel's league (dataflow::Options::instances; fewer live longer and pay "
                   "their start and final flush less often); 0: the library's default",
                   0, 1 << 20);
  cli::add_integer(program->app(), "--chunk", args.chunk,
                   "input items an instance claims at a time (dataflow::Options::chunk); 0: the library's default", 0,
                   1 << 24);
  return program;
}

namespace {

// The positional arguments both hydro benchmarks take.
void add_hydro_bench_arguments(CLI::App& app, HydroBenchArgs& args) {
  cli::add_integer(app, "threads", args.threads, "team threads", 1, 64);
  cli::add_integer(app, "cells_per_block", args.cells, "interior cells per block and direction", 2, 4096);
  cli::add_integer(app, "blocks", args.blocks, "blocks per direction", 1, 4096);
  cli::add_integer(app, "steps", args.steps, "steps of each variant; the median is kept", 1);
  cli::add_integer(app, "dim", args.dim, "dimensions: 2 or 3", 2, 3);
}

}  // namespace

const std::vector<std::string>& hydro_bench_variant_names() {
  static const std::vector<std::string> names = {
      "plain-kokkos",   "cpu",          "device",        "split",        "action-parallel",
      "plain-resident", "device-fused", "device-staged", "plain-device", "plain-dev-resident"};
  return names;
}

bool hydro_bench_variant_needs_gpu(const std::string& name) {
  return name == "device-fused" || name == "device-staged" || name == "plain-device" || name == "plain-dev-resident";
}

std::unique_ptr<cli::Program> hydro_bench_command_line(HydroBenchArgs& args) {
  auto program = std::make_unique<cli::Program>(
      "korch-bench-hydro",
      "the hydro step on every runtime configuration against a plain Kokkos loop over\n"
      "the same per-block kernel, and against a STREAM triad, measured in the same run.");
  CLI::App& app = program->app();
  add_hydro_bench_arguments(app, args);
  app.add_option("--variants", args.variants,
                 "comma list of the variants to time: " + join_names(hydro_bench_variant_names()) + "; " +
                     gpu_variants() +
                     " need a GPU build. The ratio columns divide the first variant's time "
                     "(plain-kokkos when it is listed)")
      ->type_name("LIST")
      ->default_str("every variant of the build")
      ->delimiter(',')
      ->check(cli::one_of(hydro_bench_variant_names()));
  program->add_note("KORCH_BENCH_HYDRO_ACTIVE_OMP=1 keeps libgomp's spinning workers, for comparison.");
  return program;
}

std::unique_ptr<cli::Program> hydro_plan_bench_command_line(HydroBenchArgs& args) {
  auto program = std::make_unique<cli::Program>(
      "korch-bench-hydro_plan",
      "time per hydro step run from the planner's plan against the hand-bundled step that\n"
      "computes the same: the plan without diagnostics against the cpu configuration, the\n"
      "built-in operation's plan against action-parallel; steps alternated on one Simulation.");
  CLI::App& app = program->app();
  add_hydro_bench_arguments(app, args);
  return program;
}

std::unique_ptr<cli::Program> mesh_bench_command_line(MeshBenchArgs& args) {
  auto program = std::make_unique<cli::Program>(
      "korch-bench-mesh",
      "time per airfoil iteration on a generated O-grid: hand-written loops, hand-written\n"
      "Kokkos and korch's sequential, direct and message-driven executors, same run.");
  CLI::App& app = program->app();
  cli::add_integer(app, "--ni", args.ni, "cells around the profile", 8, 1 << 20);
  cli::add_integer(app, "--nj", args.nj, "cells outwards", 2, 1 << 20);
  cli::add_integer(app, "--iterations", args.iterations, "iterations per round", 1);
  cli::add_integer(app, "--rounds", args.rounds, "rounds; the best is kept", 1);
  cli::add_integer(app, "--md-iterations", args.md_iterations, "iterations per round of the message-driven executor",
                   1);
  cli::add_integer(app, "--threads", args.threads, "threads of the message-driven executor", 1, 1024);
  return program;
}

std::unique_ptr<cli::Program> runtime_bench_command_line(RuntimeBenchArgs& args) {
  auto program =
      std::make_unique<cli::Program>("korch-bench-runtime",
                                     "the cpu_only configuration over 16^3 tiles against a plain Kokkos loop and bare\n"
                                     "std::threads running the same per-tile code, measured in the same run.");
  CLI::App& app = program->app();
  cli::add_integer(app, "threads", args.threads, "team threads (default: the host space's concurrency)", 1, 64)
      ->default_str("");
  cli::add_integer(app, "repetitions", args.reps, "interleaved repetitions; the median is kept", 1);
  program->add_note("KORCH_BENCH_RUNTIME_ACTIVE_OMP=1 keeps libgomp's spinning workers, for comparison.");
  return program;
}

std::unique_ptr<cli::Program> embed_bench_command_line(EmbedBenchArgs& args) {
  auto program = std::make_unique<cli::Program>(
      "korch-bench-embed",
      "a code's own blocks (one Kokkos View per block, 2 guard cells) in a korch::BlockList:\n"
      "a 5-point stencil step by Runtime::execute on cpu_only against the code's own loop\n"
      "over the same blocks, serial and parallel, the variants taking turns.");
  CLI::App& app = program->app();
  cli::add_integer(app, "--blocks", args.blocks, "blocks", 1, 4096);
  cli::add_integer(app, "--cells", args.cells, "interior cells per direction of a 2-D block", 1, 4096);
  cli::add_integer(app, "--steps", args.steps, "steps per timed sample", 1, 1000000);
  cli::add_integer(app, "--repetitions", args.reps, "samples of each variant; the median is kept", 1, 100000);
  app.add_flag("--every-team", args.every_team, "start every team and helper team first (idle threads)");
  return program;
}

std::unique_ptr<cli::Program> hydro_amr_bench_command_line(HydroAmrBenchArgs& args) {
  auto program = std::make_unique<cli::Program>(
      "korch-bench-hydro_amr",
      "the Sedov blast (2D or 3D) on an adaptive mesh against the uniform grid of its finest level,\n"
      "both run by korch-hydro's solver in this process: density L1 error and shock radius\n"
      "against the exact solution, cell updates, wall time, and their ratios.");
  CLI::App& app = program->app();
  cli::add_integer(app, "--roots", args.roots, "root blocks per direction", 1, 1024);
  cli::add_integer(app, "--cells-per-block", args.cells_per_block, "cells per block and direction (even)", 4, 4096);
  cli::add_integer(app, "--max-level", args.max_level, "levels above the roots", 1, 8);
  cli::add_integer(app, "--threads", args.threads, "threads per team", 1, 64);
  cli::add_integer(app, "--regrid-every", args.regrid_every, "steps between regrids", 1, 1000000);
  cli::add_real(app, "--tmax", args.tmax, "end time", 0.0, 1.0, true);
  cli::add_integer(app, "--dim", args.dim, "dimensions: 2 (a cylindrical blast) or 3 (spherical)", 2, 3);
  cli::add_integer(app, "--uniform-cells-per-block", args.uniform_cells_per_block,
                   "the uniform run's cells per block and direction (the main job's 64); must divide the finest "
                   "level's cells per direction",
                   1, 65536);
  cli::add_integer(app, "--rounds", args.rounds,
                   "rounds of the two runs, alternated (uniform, adaptive, uniform, ...); the ratios' median", 1, 100);
  app.add_option("--limiter", args.limiter, "slope limiter of both runs (korch-hydro's --limiter): minmod or mc")
      ->type_name("NAME")
      ->capture_default_str()
      ->check(cli::one_of({"minmod", "mc"}));
  return program;
}

std::unique_ptr<cli::Program> soak_bench_command_line(SoakBenchArgs& args) {
  auto program =
      std::make_unique<cli::Program>("korch-bench-soak",
                                     "random thread-team rounds and runtime cycles with injected faults and teams\n"
                                     "destroyed mid-cycle; prints items lost and duplicated (both must be 0) and\n"
                                     "cycles per second.");
  CLI::App& app = program->app();
  cli::add_integer(app, "cycles", args.cycles, "cycles to run", 1);
  cli::add_integer(app, "--seed", args.seed, "random seed", 0);
  program->add_note("Exit status 1 also when an item was lost or duplicated.");
  return program;
}

std::unique_ptr<cli::Program> streams_bench_command_line(StreamsBenchArgs& args) {
  auto program =
      std::make_unique<cli::Program>("korch-bench-streams",
                                     "the 802.11a-style receiver and transmitter, sequential against |>>>|, and the\n"
                                     "cost of commit queues against an SPSC ring, in interleaved rounds of one run.");
  CLI::App& app = program->app();
  cli::add_integer(app, "frames", args.frames, "frames per round", 1);
  cli::add_integer(app, "threads", args.threads, "threads of the |>>>| runs", 1, 1024);
  cli::add_integer(app, "queue_capacity", args.qcap, "queue capacity", 1);
  cli::add_integer(app, "commit_queue_capacity", args.cqcap, "commit queue capacity", 1);
  cli::add_integer(app, "reps", args.reps, "rounds; medians are printed", 1);
  program->add_note(
      "KORCH_BENCH_STREAMS_IDLE_SPIN_US=N sets the schedulers' idle_spin in microseconds (-1: never sleep).");
  return program;
}

std::unique_ptr<cli::Program> thread_team_bench_command_line(ThreadTeamBenchArgs& args) {
  auto program =
      std::make_unique<cli::Program>("korch-bench-thread_team",
                                     "ThreadTeam throughput and cycle latency against oneTBB's flow graph and OpenMP\n"
                                     "tasks (each when built in), measured in the same run.");
  CLI::App& app = program->app();
  cli::add_integer(app, "items", args.items, "no-op items per run", 1, 1L << 30);
  cli::add_integer(app, "reps", args.reps, "rounds; medians are printed", 1);
  return program;
}

std::unique_ptr<cli::Program> task_bench_command_line(TaskBenchArgs& args,
                                                      const std::vector<std::string>& built_drivers) {
  auto program = std::make_unique<cli::Program>(
      "korch-bench-task_bench",
      "a Task Bench-style benchmark: task graphs of --width points over --steps timesteps in\n"
      "several dependence patterns, run by korch's ThreadTeam (one cycle per timestep), OpenMP tasks\n"
      "with depend clauses and oneTBB's flow graph (each peer when built in) on the same number of\n"
      "threads, while the compute kernel of every task shrinks from --max-iterations to\n"
      "--min-iterations. Prints wall time, task duration, flop rate and efficiency per size and\n"
      "driver, and the minimum effective task granularity METG(50%) per pattern and driver.");
  std::vector<std::string> pattern_names;
  for (Pattern p : all_patterns()) pattern_names.push_back(to_string(p));
  args.patterns = pattern_names;
  args.drivers = built_drivers;
  args.threads = std::max(1U, std::thread::hardware_concurrency());
  CLI::App& app = program->app();
  app.add_option("--patterns", args.patterns,
                 "dependence patterns to run, comma-separated: " + join_names(pattern_names))
      ->delimiter(',')
      ->type_name("LIST")
      ->check(cli::one_of(pattern_names));
  cli::add_integer(app, "--width", args.width, "points per timestep (W)", 1, 1L << 16);
  cli::add_integer(app, "--steps", args.steps, "timesteps (T)", 1, task_bench_max_tasks);
  cli::add_integer(app, "--threads", args.threads, "threads of every driver", 1, 256);
  cli::add_integer(app, "--rounds", args.rounds, "timed runs per driver and size", 1, 1000);
  app.add_option("--statistic", args.statistic,
                 "which round the figures use: best (the least disturbed by other programs) or median")
      ->type_name("WHICH")
      ->check(cli::one_of({"best", "median"}));
  cli::add_integer(app, "--max-iterations", args.max_iterations, "kernel iterations of the largest tasks", 1, 1L << 30);
  cli::add_integer(app, "--min-iterations", args.min_iterations, "kernel iterations of the smallest tasks", 1,
                   1L << 30);
  cli::add_integer(app, "--factor", args.factor, "ratio of consecutive sizes of the sweep", 2, 16);
  app.add_option("--drivers", args.drivers,
                 "drivers to compare, comma-separated: korch, korch_pool, openmp, tbb (built in: " +
                     join_names(built_drivers) + ")")
      ->delimiter(',')
      ->type_name("LIST")
      ->check(cli::one_of({"korch", "korch_pool", "openmp", "tbb"}));
  app.add_flag("--quick", args.quick,
               "a short sweep for a smoke test: unless given, --steps 50 --rounds 1 --max-iterations 1024 --factor 4");
  app.add_flag("--inject-fault", args.inject_fault,
               "for the tests of the checks: one task stamps a wrong point on its output, so the run must fail");
  program->add_note(
      "Each task checks that it read exactly its dependencies' outputs, and every output is checked\n"
      "after each run; a failed check ends the program with status 1. See docs/task-bench.md.");
  return program;
}

void complete_task_bench_args(cli::Program& program, TaskBenchArgs& args,
                              const std::vector<std::string>& built_drivers) {
  const CLI::App& app = program.app();
  if (args.quick) {
    if (app.count("--steps") == 0) args.steps = 50;
    if (app.count("--rounds") == 0) args.rounds = 1;
    if (app.count("--max-iterations") == 0) args.max_iterations = 1024;
    if (app.count("--factor") == 0) args.factor = 4;
  }
  args.patterns = unique(args.patterns);
  args.drivers = unique(args.drivers);
  for (const auto& d : args.drivers) {
    if (std::find(built_drivers.begin(), built_drivers.end(), d) == built_drivers.end())
      throw cli::UsageError("--drivers: '" + d +
                            "' is not built into this program (built in: " + join_names(built_drivers) + ")");
  }
  if (args.patterns.empty()) throw cli::UsageError("--patterns: name at least one pattern");
  if (args.drivers.empty()) throw cli::UsageError("--drivers: name at least one driver");
  if (args.min_iterations > args.max_iterations)
    throw cli::UsageError("--min-iterations " + std::to_string(args.min_iterations) + " is above --max-iterations " +
                          std::to_string(args.max_iterations));
  if (args.width * args.steps > task_bench_max_tasks)
    throw cli::UsageError("--width x --steps = " + std::to_string(args.width * args.steps) + " tasks; at most " +
                          std::to_string(task_bench_max_tasks));
}

}  // namespace korch::bench
