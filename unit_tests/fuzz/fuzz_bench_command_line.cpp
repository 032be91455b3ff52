// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: the benchmark programs' command lines (bench/bench_command_lines.hpp), parsed as
// each program parses them but without running the benchmark. Input: the program's name on the
// first line, then one argument per line. Rules checked: a parse either lets the program run or
// ends in --help (0) or a usage error (2) whose one message starts with the program's name; never
// another exception. korch-bench-task_bench's checks after the parse throw only cli::UsageError,
// whose message starts with the option it names ("--").
#include "bench_command_lines.hpp"
#include "fuzz_support.hpp"

#include <korch/cli/program.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using korch::fuzz::broken;
using korch::fuzz::lines_of;
using korch::fuzz::parses;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = lines_of(std::string(reinterpret_cast<const char*>(data), size));
  if (args.empty()) return 0;
  namespace bench = korch::bench;
  // Each program's arguments bound to its own variables, as its main binds them. tbb is left out
  // of the drivers built in, so that naming it is a usage error as in a build without oneTBB.
  const std::vector<std::string> built = {"korch", "korch_pool", "openmp"};
  bench::DataflowBenchArgs dataflow;
  bench::HydroBenchArgs hydro;
  bench::MeshBenchArgs mesh;
  bench::RuntimeBenchArgs runtime;
  bench::SoakBenchArgs soak;
  bench::StreamsBenchArgs streams;
  bench::ThreadTeamBenchArgs thread_team;
  bench::TaskBenchArgs task_bench;
  // Each program by name, built only when chosen: building every CLI11 App per input is slow.
  const std::vector<std::pair<std::string, std::function<std::unique_ptr<korch::cli::Program>()>>> programs = {
      {"korch-bench-dataflow", [&] { return bench::dataflow_bench_command_line(dataflow); }},
      {"korch-bench-hydro", [&] { return bench::hydro_bench_command_line(hydro); }},
      {"korch-bench-hydro_plan", [&] { return bench::hydro_plan_bench_command_line(hydro); }},
      {"korch-bench-mesh", [&] { return bench::mesh_bench_command_line(mesh); }},
      {"korch-bench-runtime", [&] { return bench::runtime_bench_command_line(runtime); }},
      {"korch-bench-soak", [&] { return bench::soak_bench_command_line(soak); }},
      {"korch-bench-streams", [&] { return bench::streams_bench_command_line(streams); }},
      {"korch-bench-thread_team", [&] { return bench::thread_team_bench_command_line(thread_team); }},
      {"korch-bench-task_bench", [&] { return bench::task_bench_command_line(task_bench, built); }},
  };
  // An unknown name picks a program by its first byte, so mutated names still reach a parser.
  std::size_t chosen = args[0].empty() ? 0 : static_cast<unsigned char>(args[0][0]) % programs.size();
  for (std::size_t i = 0; i < programs.size(); ++i)
    if (programs[i].first == args[0]) chosen = i;
  const std::unique_ptr<korch::cli::Program> program = programs[chosen].second();
  if (program->name() != programs[chosen].first)
    broken("a benchmark's command line carries its program's name", program->name());
  if (!parses(*program, args) || program->name() != "korch-bench-task_bench") return 0;
  try {
    bench::complete_task_bench_args(*program, task_bench, built);
  } catch (const korch::cli::UsageError& e) {
    if (std::string(e.what()).rfind("--", 0) != 0) broken("a usage error names the option first", e.what());
    return 0;
  } catch (const std::exception& e) {
    broken("only cli::UsageError escapes from complete_task_bench_args", e.what());
  }
  if (task_bench.patterns.empty() || task_bench.drivers.empty() ||
      task_bench.min_iterations > task_bench.max_iterations ||
      task_bench.width * task_bench.steps > bench::task_bench_max_tasks)
    broken("accepted Task Bench arguments run at least one graph of at most task_bench_max_tasks tasks", "");
  return 0;
}
