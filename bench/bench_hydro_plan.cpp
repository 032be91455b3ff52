// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hydro run from the planner's plan (docs/planner.md, "Hydro as an operation") against the
// hand-bundled step, like with like: the plan of the built-in operation without its diagnostics
// action against the hand-bundled cpu step (both update the blocks and reduce the time step), and
// the whole built-in operation's plan (update, time step and per-block diagnostics) against the
// hand-bundled action-parallel step, which computes the same diagnostics. Steps are alternated on
// one Simulation, the order of the variants rotating from round to round so that none always
// follows the same one; the state stays bitwise the same whichever variant ran a step. Ratios are
// printed, nothing is asserted.
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
  const char* computes;               // what one step of it computes, printed beside its figures
  const char* config;                 // the hand-bundled configuration (the plan's runtime is the cpu one's)
  const char* operation;              // "" for the hand-bundled step
  int like = -1;                      // the hand-bundled variant that computes the same (for the plans)
  std::vector<double> step, execute;  // seconds per step: step() whole, and its Runtime part
};

// The built-in operation without its diagnostics action, written to a file of its own.
struct OperationWithoutDiagnostics {
  std::string path;
  OperationWithoutDiagnostics() {
    korch::plan::Operation op = korch::hydro::load_operation("builtin");
    for (auto it = op.steps.begin(); it != op.steps.end();)
      it = it->is_action && it->action.action == "diagnostics" ? op.steps.erase(it) : it + 1;
    path = (std::filesystem::temp_directory_path() / ("korch-bench-hydro_plan-" + std::to_string(::getpid()) + ".json"))
               .string();
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
  std::printf(
      "korch-bench-hydro_plan: Sedov %dD, %d^%d blocks of %d^%d cells (%lld cells), %u team threads; median "
      "(min) of %d alternated steps per variant\n",
      args.dim, args.blocks, args.dim, args.cells, args.dim, n_cells, args.threads, args.steps);
  std::vector<Variant> variants = {{"hand cpu", "update + dt", "cpu", "", -1, {}, {}},
                                   {"plan, no diag.", "update + dt", "cpu", "", 0, {}, {}},
                                   {"hand action-par", "update + dt + diagnostics", "action-parallel", "", -1, {}, {}},
                                   {"plan", "update + dt + diagnostics", "cpu", "builtin", 2, {}, {}}};
  const OperationWithoutDiagnostics without_diagnostics;
  variants[1].operation = without_diagnostics.path.c_str();
  korch::hydro::Simulation sim(o);
  const std::size_t n = variants.size();
  for (int rep = 0; rep < args.steps + 1; ++rep) {
    for (std::size_t i = 0; i < n; ++i) {
      Variant& v = variants[(i + static_cast<std::size_t>(rep)) % n];
      sim.set_operation("");
      sim.set_configuration(korch::hydro::parse_configuration(v.config));
      sim.set_operation(v.operation);
      const double e0 = sim.phase_times().execute;
      const double t = korch::bench::time_once([&] { sim.step(); });
      if (rep > 0) {  // the first round warms pools and caches
        v.step.push_back(t);
        v.execute.push_back(sim.phase_times().execute - e0);
      }
    }
  }
  sim.set_configuration(korch::hydro::HydroConfiguration::cpu);
  sim.set_operation("builtin");
  std::printf("  the plan's steps:");
  for (const auto& s : sim.operation()->plan().steps)
    std::printf(" %s",
                s.kind == korch::plan::StepKind::bundle ? s.bundle.name.c_str() : korch::plan::to_string(s.kind));
  std::printf("\n");
  std::printf("  %-16s %-26s %24s %24s %16s %16s\n", "variant", "computes", "step: median (min) [ms]",
              "execute: median (min)", "cells/s (median)", "like/this");
  for (const auto& v : variants) {
    std::printf("  %-16s %-26s %13.3f (%8.3f) %13.3f (%8.3f) %16.4e", v.name, v.computes, 1e3 * median(v.step),
                1e3 * smallest(v.step), 1e3 * median(v.execute), 1e3 * smallest(v.execute),
                static_cast<double>(n_cells) / median(v.step));
    if (v.like >= 0) {
      const Variant& hand = variants[static_cast<std::size_t>(v.like)];
      std::printf("  %6.3f (%5.3f)", median(hand.step) / median(v.step), smallest(hand.step) / smallest(v.step));
    }
    std::printf("\n");
  }
  std::printf(
      "  like/this: the hand-bundled variant that computes the same (plan, no diag.: hand cpu; plan: hand\n"
      "  action-par) over the plan, medians (mins); >= 1: the plan is at least as fast. Diagnostics cost the\n"
      "  plan %.1f %% of its update + dt step (plan over plan, no diag., medians); hand cpu over the plan\n"
      "  with them: %.3f (%.3f).\n",
      100.0 * (median(variants[3].step) / median(variants[1].step) - 1.0),
      median(variants[0].step) / median(variants[3].step), smallest(variants[0].step) / smallest(variants[3].step));
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
