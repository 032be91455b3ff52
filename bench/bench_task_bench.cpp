// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-bench-task_bench: a Task Bench-style benchmark (docs/task-bench.md). Task graphs of W
// points over T timesteps (patterns in task_graph.hpp) run through korch's ThreadTeam, OpenMP tasks
// with depend clauses and oneTBB's flow graph (task_bench_drivers.hpp), each task a compute kernel
// of a given number of iterations (task_kernel.hpp) that checks its inputs (task_execution.hpp).
// The kernel size is swept from large to tiny; for each driver the program prints wall time, task
// duration, flop rate and efficiency, then the minimum effective task granularity
// (task_bench_metg.hpp) and one summary line per pattern.
#include "bench_command_lines.hpp"
#include "bench_timing.hpp"
#include "task_bench_drivers.hpp"
#include "task_bench_metg.hpp"

#include <korch/cli/program.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace korch::bench;

using Args = korch::bench::TaskBenchArgs;

// A pause before each timed run: threads that the previous driver left polling (libgomp's and
// oneTBB's workers spin for a while after their work ends, korch's team threads for
// TeamOptions::spin) go to sleep before the next driver starts.
constexpr auto settle = std::chrono::milliseconds(5);

using korch::bench::load_average;

const char* env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

std::vector<long> sweep_sizes(const Args& a) {
  std::vector<long> sizes;
  for (long n = a.max_iterations; n >= a.min_iterations; n /= a.factor) {
    sizes.push_back(n);
    if (n == 1) break;
  }
  return sizes;
}

std::string format_us(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, seconds * 1e6 < 10 ? "%.2f" : "%.1f", seconds * 1e6);
  return buf;
}

std::string format_metg(const Metg& m) {
  if (!m.valid) return "n/a";
  return (m.reached ? "" : "< ") + format_us(m.seconds) + " us";
}

volatile std::uint64_t kernel_sink = 0;  // keeps the calibration's kernel calls

// Flops per second of the kernel alone on the calling thread: the best of a few calls of the
// sweep's largest size (no runtime, no other thread).
double kernel_flop_rate(long iterations) {
  const double best = best_of(5, [&] { return time_once([&] { kernel_sink = compute_kernel(iterations, 0.25); }); });
  return static_cast<double>(iterations) * flops_per_iteration / best;
}

using Drivers = std::vector<std::unique_ptr<TaskBenchDriver>>;
using Walls = std::vector<std::vector<std::vector<double>>>;  // per size, per driver: per round
using Sweep = std::vector<std::vector<SweepFigures>>;         // per driver: per size

// One run of every task by `d` at `iterations` per task, its results checked; `graph_label` names
// the graph in the error of a wrong result.
double timed_run(TaskRunner& runner, TaskBenchDriver& d, long iterations, const std::string& graph_label) {
  std::this_thread::sleep_for(settle);
  runner.begin_run(iterations);
  const double wall = d.run(runner);
  runner.verify(graph_label + ", " + d.name() + ", " + std::to_string(iterations) + " iterations");
  return wall;
}

// Round after round, each a pass over the whole sweep with the drivers taking turns at every
// size: the rounds of one size lie far apart in time, so a burst of other work on the machine
// spoils only some of them.
Walls time_sweep(const Args& args, const std::vector<long>& sizes, TaskRunner& runner, const Drivers& drivers,
                 const std::string& graph_label) {
  Walls walls(sizes.size(), std::vector<std::vector<double>>(drivers.size()));
  std::printf("round");
  for (int r = 0; r < args.rounds; ++r) {
    const auto t0 = Clock::now();
    for (std::size_t s = 0; s < sizes.size(); ++s) {
      for (std::size_t k = 0; k < drivers.size(); ++k)
        walls[s][k].push_back(timed_run(runner, *drivers[k], sizes[s], graph_label));
    }
    std::printf(" %d (%.1f s)%s", r + 1, seconds_since(t0), r + 1 < args.rounds ? "," : "\n");
    std::fflush(stdout);
  }
  return walls;
}

// The table: one row per size and driver.
Sweep print_sweep_table(const Args& args, const std::vector<long>& sizes, const Walls& walls, const TaskGraph& graph,
                        const Drivers& drivers) {
  std::printf("%10s %11s  %-7s %12s %12s %10s %9s %10s\n", "iterations", "flops/task", "driver", "wall med ms",
              "wall best ms", "task us", "GFLOP/s", "efficiency");
  Sweep sweep(drivers.size());
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const long iterations = sizes[s];
    const double flops_per_task = static_cast<double>(iterations) * flops_per_iteration;
    for (std::size_t k = 0; k < drivers.size(); ++k) {
      const std::vector<double>& w = walls[s][k];
      const double reference_rate = sweep[k].empty() ? 0.0 : sweep[k].front().flop_rate;
      const double wall = args.statistic == "best" ? smallest(w) : median(w);
      const SweepFigures f = sweep_figures(iterations, wall, median(w), smallest(w), graph.tasks(), args.threads,
                                           flops_per_task, reference_rate);
      sweep[k].push_back(f);
      std::printf("%10s %11s  %-7s %12.3f %12.3f %10s %9.3f %10.3f\n", k == 0 ? std::to_string(iterations).c_str() : "",
                  k == 0 ? std::to_string(iterations * flops_per_iteration).c_str() : "", drivers[k]->name(),
                  f.median_wall * 1e3, f.best_wall * 1e3, format_us(f.task_duration).c_str(), f.flop_rate * 1e-9,
                  f.efficiency);
    }
  }
  return sweep;
}

// The time per timestep at the smallest size and each driver's METG; `metgs` gets the METGs' text.
std::vector<Metg> print_metgs(const Args& args, const std::vector<long>& sizes, const Sweep& sweep,
                              const TaskGraph& graph, const Drivers& drivers, std::string& metgs) {
  std::string per_step;
  std::vector<Metg> m(drivers.size());
  for (std::size_t k = 0; k < drivers.size(); ++k) {
    const std::string sep = k == 0 ? "" : ", ";
    per_step +=
        sep + drivers[k]->name() + " " + format_us(sweep[k].back().wall / static_cast<double>(graph.steps())) + " us";
    m[k] = metg(sweep[k]);
    metgs += sep + drivers[k]->name() + " " + format_metg(m[k]);
  }
  std::printf("per timestep at %ld iterations (%s wall / T): %s\n", sizes.back(), args.statistic.c_str(),
              per_step.c_str());
  std::printf("METG(50%%): %s\n", metgs.c_str());
  return m;
}

// The efficiencies are relative to each driver's rate at the largest size; check that rate
// against the kernel alone on as many threads as the graph can use at once.
void print_rate_check(const Args& args, const std::vector<long>& sizes, const Sweep& sweep, const TaskGraph& graph,
                      const Drivers& drivers, double kernel_rate) {
  const unsigned usable =
      static_cast<unsigned>(std::min<long>({static_cast<long>(args.threads), graph.width(),
                                            static_cast<long>(std::max(1U, std::thread::hardware_concurrency()))}));
  const double ideal = kernel_rate * usable;
  std::string shares;
  bool low = false;
  for (std::size_t k = 0; k < drivers.size(); ++k) {
    const double share = sweep[k].front().flop_rate / ideal;
    low = low || share < 0.8;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.0f%%", k == 0 ? "" : ", ", drivers[k]->name(), share * 100);
    shares += buf;
  }
  std::printf("rate at %ld iterations / the kernel alone on %u thread(s) (%.2f GFLOP/s): %s\n", sizes.front(), usable,
              ideal * 1e-9, shares.c_str());
  if (low) {
    std::printf(
        "  below 80%%: at the largest size that driver lost time to other work on the machine or to its own\n"
        "  overhead (tasks too small to hide it), so its efficiencies and METG come out too favourable\n");
  }
}

// The pattern's summary line: the METGs, and korch's against each other driver's.
std::string summary_line(const std::string& label, const std::string& metgs, const std::vector<Metg>& m,
                         const Drivers& drivers) {
  std::string line = "METG(50%) " + label + ": " + metgs;
  std::string ratios;
  for (std::size_t k = 1; k < drivers.size(); ++k) {
    if (std::string(drivers[0]->name()) != "korch" || !m[0].valid || !m[k].valid || m[k].seconds <= 0) continue;
    char buf[64];
    const bool bound = !m[0].reached || !m[k].reached;
    std::snprintf(buf, sizeof buf, "korch/%s %.2f%s", drivers[k]->name(), m[0].seconds / m[k].seconds,
                  bound ? " (bound)" : "");
    ratios += (ratios.empty() ? "" : ", ") + std::string(buf);
  }
  if (!ratios.empty()) line += "; " + ratios;
  return line;
}

// Runs one pattern's sweep and prints its table; returns its summary line. `kernel_rate`: the
// kernel's flop rate alone on one thread.
std::string run_pattern(const Args& args, Pattern pattern, double kernel_rate) {
  const TaskGraph graph(pattern, args.width, args.steps);
  TaskRunner runner(graph);
  runner.inject_fault(args.inject_fault);
  Drivers drivers;
  for (const auto& name : args.drivers) drivers.push_back(make_driver(name, runner, args.threads));
  const std::string label = std::string(to_string(pattern)) + " W=" + std::to_string(graph.width());
  const std::string graph_label = label + " T=" + std::to_string(graph.steps());

  std::printf("\n== %s T=%ld: %ld tasks, %ld dependencies ==\n", label.c_str(), graph.steps(), graph.tasks(),
              graph.edges());
  std::fflush(stdout);
  for (auto& d : drivers) timed_run(runner, *d, 1, graph_label);  // warm-up: threads started, caches and pools filled

  const std::vector<long> sizes = sweep_sizes(args);
  const Walls walls = time_sweep(args, sizes, runner, drivers, graph_label);
  const Sweep sweep = print_sweep_table(args, sizes, walls, graph, drivers);
  std::string metgs;
  const std::vector<Metg> m = print_metgs(args, sizes, sweep, graph, drivers, metgs);
  print_rate_check(args, sizes, sweep, graph, drivers, kernel_rate);
  return summary_line(label, metgs, m, drivers);
}

int run(const Args& args) {
  const std::string load_start = load_average();
  const std::vector<long> sizes = sweep_sizes(args);
  std::printf(
      "korch-bench-task_bench: drivers %s, %u threads each (%u hardware threads); %d round(s) over the\n"
      "sweep, the drivers taking turns at each size; task duration, flop rate and efficiency from the %s round\n",
      korch::bench::join_names(args.drivers).c_str(), args.threads, std::thread::hardware_concurrency(), args.rounds,
      args.statistic == "best" ? "best" : "median");
  std::printf("kernel: %ld flops per iteration; iterations %ld down to %ld by factors of %d; width %ld, %ld steps\n",
              flops_per_iteration, sizes.front(), sizes.back(), args.factor, args.width, args.steps);
  std::printf("OMP_WAIT_POLICY=%s OMP_PROC_BIND=%s\n", env_or("OMP_WAIT_POLICY", "(unset)"),
              env_or("OMP_PROC_BIND", "(unset)"));
  std::printf("load average at start: %s\n", load_start.c_str());
  std::fflush(stdout);

  const double kernel_rate = kernel_flop_rate(sizes.front());
  std::printf("kernel alone on one thread: %.2f GFLOP/s at %ld iterations\n", kernel_rate * 1e-9, sizes.front());
  std::fflush(stdout);
  std::vector<std::string> summary;
  for (const auto& name : args.patterns) summary.push_back(run_pattern(args, pattern_from_string(name), kernel_rate));

  std::printf(
      "\nsummary: METG(50%%) is the smallest task duration (%s wall x threads / tasks) at which a driver\n"
      "keeps half the flop rate it reaches at %ld iterations, interpolated in log(duration) between sweep\n"
      "points (\"< x\": never fell below half)\n",
      args.statistic.c_str(), sizes.front());
  for (const auto& line : summary) std::printf("%s\n", line.c_str());
  std::printf("load average at start: %s; at end: %s\n", load_start.c_str(), load_average().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  const std::vector<std::string> built = available_drivers();
  const auto command_line = korch::bench::task_bench_command_line(args, built);
  korch::cli::Program& program = *command_line;
  if (auto rc = program.parse(argc, argv)) return *rc;

  try {
    korch::bench::complete_task_bench_args(program, args, built);
  } catch (const korch::cli::UsageError& e) {
    return program.usage_error(e.what());
  }

  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(args);
  });
}
