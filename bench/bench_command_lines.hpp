// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The benchmark programs' command lines: each program's arguments and the korch::cli::Program that
// binds them, apart from the benchmarks themselves, so that the command-line fuzz target
// (unit_tests/fuzz) parses them without Kokkos and without running anything.
//
//   korch::bench::HydroBenchArgs args;
//   auto program = korch::bench::hydro_bench_command_line(args);
//   if (auto rc = program->parse(argc, argv)) return *rc;
#pragma once

#include <korch/cli/program.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace korch::bench {

struct DataflowBenchArgs {
  long long items = 4194304;
  int width = 64, repeats = 5;
  int team_size = 0;         // 0: the library's default (one lane per item of a run on GPUs, 1 on hosts)
  double queue_scale = 4.0;  // dataflow::Options::queue_scale
  int instances = 0;         // dataflow::Options::instances; 0: the library's default
  int chunk = 0;             // dataflow::Options::chunk; 0: the library's default
};
std::unique_ptr<cli::Program> dataflow_bench_command_line(DataflowBenchArgs& args);

struct HydroBenchArgs {
  unsigned threads = 2;
  int cells = 64, blocks = 4, steps = 10, dim = 2;
  std::vector<std::string> variants;  // korch-bench-hydro --variants; empty: every variant of the build
};
// korch-bench-hydro's variants, in the order they run.
const std::vector<std::string>& hydro_bench_variant_names();
// Whether a variant exists only on GPU builds (the plain device kernels and the fused kernel).
bool hydro_bench_variant_needs_gpu(const std::string& name);
std::unique_ptr<cli::Program> hydro_bench_command_line(HydroBenchArgs& args);
// korch-bench-hydro_plan: the same arguments.
std::unique_ptr<cli::Program> hydro_plan_bench_command_line(HydroBenchArgs& args);

struct MeshBenchArgs {
  int ni = 400, nj = 250, iterations = 5, rounds = 5, md_iterations = 1;
  unsigned threads = 2;
};
std::unique_ptr<cli::Program> mesh_bench_command_line(MeshBenchArgs& args);

struct RuntimeBenchArgs {
  unsigned threads = 0;  // 0: the host space's concurrency
  int reps = 21;
};
std::unique_ptr<cli::Program> runtime_bench_command_line(RuntimeBenchArgs& args);

struct EmbedBenchArgs {
  int blocks = 16, cells = 32, steps = 50, reps = 21;
  bool every_team = false;
};
std::unique_ptr<cli::Program> embed_bench_command_line(EmbedBenchArgs& args);

struct HydroAmrBenchArgs {
  int roots = 2, cells_per_block = 24, max_level = 3, threads = 2, regrid_every = 4, rounds = 1;
  int dim = 2;
  int uniform_cells_per_block = 64;  // the uniform run's blocks (the main job's); must divide the finest level
  double tmax = 0.05;
  std::string limiter = "mc";  // korch-hydro's --limiter, for both runs
};
std::unique_ptr<cli::Program> hydro_amr_bench_command_line(HydroAmrBenchArgs& args);

struct SoakBenchArgs {
  std::uint64_t cycles = 1000000;
  std::uint64_t seed = 424242;
};
std::unique_ptr<cli::Program> soak_bench_command_line(SoakBenchArgs& args);

struct StreamsBenchArgs {
  std::size_t frames = 40;
  unsigned threads = 2;
  std::size_t qcap = 1024, cqcap = 65536;
  int reps = 9;
};
std::unique_ptr<cli::Program> streams_bench_command_line(StreamsBenchArgs& args);

struct ThreadTeamBenchArgs {
  long items = 200000;
  int reps = 7;
};
std::unique_ptr<cli::Program> thread_team_bench_command_line(ThreadTeamBenchArgs& args);

// The most tasks (--width x --steps) of one Task Bench graph.
inline constexpr long task_bench_max_tasks = 1L << 20;

struct TaskBenchArgs {
  std::vector<std::string> patterns;  // default: every pattern
  std::vector<std::string> drivers;   // default: every driver built in
  long width = 2;
  long steps = 1000;
  unsigned threads = 1;  // default: the machine's hardware threads
  int rounds = 5;
  long max_iterations = 1L << 18;
  long min_iterations = 1;
  int factor = 2;
  std::string statistic = "best";
  bool quick = false;
  bool inject_fault = false;
};
// `built_drivers`: the drivers built into the program (task_bench_drivers.hpp's available_drivers()).
std::unique_ptr<cli::Program> task_bench_command_line(TaskBenchArgs& args,
                                                      const std::vector<std::string>& built_drivers);
// After a parse that lets the program run: applies --quick's defaults, drops repeated patterns and
// drivers, and checks what spans options; throws cli::UsageError naming the option.
void complete_task_bench_args(cli::Program& program, TaskBenchArgs& args,
                              const std::vector<std::string>& built_drivers);

// "a, b, c".
std::string join_names(const std::vector<std::string>& names);

}  // namespace korch::bench
