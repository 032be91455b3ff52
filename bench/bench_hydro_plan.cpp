// Hydro run from the planner's plan (docs/planner.md, "Hydro as an operation") against the
// hand-bundled step: time per step of the built-in operation's plan (guard fill, one bundle with
// update+cell_dt and diagnostics, the time-step reduction), of the same operation without the
// diagnostics action (the work of the cpu configuration), and of the hand-bundled step on the cpu
// configuration (no diagnostics) and on action-parallel (diagnostics on a packet team), alternated
// step by step on one Simulation; the state stays bitwise the same whichever variant ran a step.
// Ratios are printed, nothing is asserted.
//
//   korch-bench-hydro_plan [threads=2] [cells_per_block=64] [blocks=4] [steps=10] [dim=2]
#include "bench_command_lines.hpp"
#include "bench_timing.hpp"
#include "hydro_operation.hpp"
#include "simulation.hpp"

#include <korch/backend/passive_openmp.hpp>
#include <korch/cli/program.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using korch::bench::median;
using korch::bench::smallest;

struct Variant {
  const char* name;
  const char* config;     // the hand-bundled configuration (the plan's runtime is the cpu one's)
  const char* operation;  // "" for the hand-bundled step
  std::vector<double> step, execute;  // seconds per step: step() whole, and its Runtime part
};

// The built-in operation without its diagnostics action, written to a file of its own.
struct OperationWithoutDiagnostics {
  std::string path;
  OperationWithoutDiagnostics() {
    korch::plan::Operation op = korch::hydro::load_operation("builtin");
    for (auto it = op.steps.begin(); it != op.steps.end();)
      it = it->is_action && it->action.action == "diagnostics" ? op.steps.erase(it) : it + 1;
    path = (std::filesystem::temp_directory_path() / ("korch-bench-hydro_plan-" + std::to_string(::getpid()) + ".json")).string();
    std::ofstream(path) << op.to_json();
  }
  ~OperationWithoutDiagnostics() {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
};

int run(const korch::bench::HydroBenchArgs& args) {
  korch::hydro::Options o;
  o.threads = args.threads;
  o.cells_per_block = args.cells;
  o.blocks = args.blocks;
  o.dim = args.dim;
  o.quiet = true;
  o.write_output = false;
  o.boundary = korch::hydro::Boundary::periodic;
  long long n_cells = 1;
  for (int d = 0; d < args.dim; ++d) n_cells *= static_cast<long long>(args.cells) * args.blocks;
  std::printf("korch-bench-hydro_plan: Sedov %dD, %d^%d blocks of %d^%d cells (%lld cells), %u team threads; median "
              "(min) of %d alternated steps per variant\n",
              args.dim, args.blocks, args.dim, args.cells, args.dim, n_cells, args.threads, args.steps);
  std::vector<Variant> variants = {{"hand cpu", "cpu", "", {}, {}},
                                   {"plan", "cpu", "builtin", {}, {}},
                                   {"plan, no diag.", "cpu", "", {}, {}},
                                   {"hand action-par", "action-parallel", "", {}, {}}};
  const OperationWithoutDiagnostics without_diagnostics;
  variants[2].operation = without_diagnostics.path.c_str();
  korch::hydro::Simulation sim(o);
  for (int rep = 0; rep < args.steps + 1; ++rep) {
    for (auto& v : variants) {
      sim.set_operation("");
      sim.set_configuration(v.config);
      sim.set_operation(v.operation);
      const double e0 = sim.phase_times().execute;
      const double t = korch::bench::time_once([&] { sim.step(); });
      if (rep > 0) {  // the first round warms pools and caches
        v.step.push_back(t);
        v.execute.push_back(sim.phase_times().execute - e0);
      }
    }
  }
  sim.set_configuration("cpu");
  sim.set_operation("builtin");
  std::printf("  the plan's steps:");
  for (const auto& s : sim.operation()->plan().steps)
    std::printf(" %s", s.kind == korch::plan::StepKind::bundle ? s.bundle.name.c_str() : korch::plan::to_string(s.kind));
  std::printf("\n");
  const Variant& hand = variants[0];
  std::printf("  %-16s %26s %26s %20s %18s\n", "variant", "step: median (min) [ms]", "execute: median (min) [ms]",
              "cells/s (median)", "hand cpu/this");
  for (const auto& v : variants) {
    std::printf("  %-16s %15.3f (%8.3f) %15.3f (%8.3f) %20.4e %11.3f (%5.3f)\n", v.name, 1e3 * median(v.step),
                1e3 * smallest(v.step), 1e3 * median(v.execute), 1e3 * smallest(v.execute),
                static_cast<double>(n_cells) / median(v.step), median(hand.step) / median(v.step),
                smallest(hand.step) / smallest(v.step));
  }
  std::printf("  (ratio hand cpu/this >= 1: the plan is at least as fast as the hand-bundled step; medians (mins))\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  korch::prefer_passive_openmp_wait(argv, "KORCH_BENCH_HYDRO_ACTIVE_OMP");
  korch::bench::HydroBenchArgs args;
  const auto command_line = korch::bench::hydro_plan_bench_command_line(args);
  korch::cli::Program& program = *command_line;
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(args);
  });
}
