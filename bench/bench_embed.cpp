// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A physics code's own small blocks run by korch: 16 blocks of 32^2 cells (by default), each the
// code's own Kokkos::View<double****, LayoutLeft> u(i, j, k, var) with 2 guard cells, listed in a
// korch::BlockList. One step is a 5-point stencil from variable 0 into variable 1 over every
// block's interior. Four variants run the same per-block code, taking turns sample by sample so
// that load from other processes hits them alike:
//   plain, serial       the code's own loop over its blocks on the calling thread
//   plain, parallel     the same loop as a Kokkos parallel_for over blocks on the default host
//                       space (OpenMP's threads on the openmp build, one thread on serial)
//   korch, 1 thread     Runtime::execute on cpu_only with its team started with 1 thread
//   korch, 2 threads    Runtime::execute on cpu_only as built in (2 threads)
// The runtime is a default korch::Runtime (sized to the machine). Ratios compare like with like:
// korch 1 thread against the serial loop, korch 2 threads against the parallel loop with the host
// space's threads (the goal is <= 1.3). The machine's load (/proc/loadavg) is printed before and
// after: on a shared machine read the figures beside it.
//
//   korch-bench-embed [--blocks 16] [--cells 32] [--steps 50] [--repetitions 21] [--every-team]
// --every-team starts every team and helper team of the runtime first (idle threads the cycles do
// not use), and prints what starting them took.
#include "bench_command_lines.hpp"
#include "bench_timing.hpp"

#include <korch/backend/passive_openmp.hpp>
#include <korch/block_list.hpp>
#include <korch/bundle.hpp>
#include <korch/cli/program.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>
#include <korch/tile.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

using korch::bench::Clock;
using korch::bench::median;
using korch::bench::seconds_since;
using korch::bench::smallest;

// The code's own storage of one block: u(i, j, k, var), guard cells included.
using BlockStorage = Kokkos::View<double****, Kokkos::LayoutLeft, Kokkos::HostSpace>;
constexpr int guard = 2;
constexpr double nu = 0.2;

// The code's per-block update: variable 1 from variable 0 on [i0, i1) x [j0, j1). The view comes by
// value so that its pointer and strides are locals the stores cannot alias.
void stencil(const BlockStorage u, int i0, int i1, int j0, int j1) {
  for (int j = j0; j < j1; ++j)
    for (int i = i0; i < i1; ++i)
      u(i, j, 0, 1) = u(i, j, 0, 0) + nu * (u(i - 1, j, 0, 0) + u(i + 1, j, 0, 0) + u(i, j - 1, 0, 0) +
                                            u(i, j + 1, 0, 0) - 4.0 * u(i, j, 0, 0));
}

using korch::bench::load_average;

// This process's resident memory (VmRSS) in KiB, or 0.
long resident_kib() {
  std::ifstream in("/proc/self/status");
  std::string key;
  while (in >> key) {
    if (key == "VmRSS:") {
      long kib = 0;
      in >> kib;
      return kib;
    }
    std::getline(in, key);
  }
  return 0;
}

struct Code {
  std::vector<BlockStorage> u;
  int cells;
  Code(int blocks, int cells) : cells(cells) {
    for (int b = 0; b < blocks; ++b) {
      u.emplace_back("block", cells + 2 * guard, cells + 2 * guard, 1, 2);
      for (int j = 0; j < cells + 2 * guard; ++j)
        for (int i = 0; i < cells + 2 * guard; ++i) u.back()(i, j, 0, 0) = 1.0 + 0.01 * ((i * 7 + j * 3 + b) % 13);
    }
  }
  void step_serial() const {
    for (const auto& v : u) stencil(v, guard, guard + cells, guard, guard + cells);
  }
  void step_parallel() const {
    const auto* blocks = u.data();
    const int lo = guard, hi = guard + cells;
    Kokkos::parallel_for("plain blocks",
                         Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace>(0, static_cast<int>(u.size())),
                         [=](int b) { stencil(blocks[b], lo, hi, lo, hi); });
    Kokkos::fence();
  }
  korch::BlockList list() const {
    korch::BlockList l("embed bench", 2);
    for (const auto& v : u) {
      korch::BlockShape s;
      s.cells = {cells, cells, 1};
      s.guard = {guard, guard, 0};
      l.add(s, korch::BlockArray::of(v, korch::IndexOrder::i_j_k_var));
    }
    return l;
  }
  // The action: the same per-block code on the item's box (block-local indices, guards counted,
  // are the code's own indices), written as the README says: a typed box routine, no casts.
  korch::Bundle bundle() const {
    korch::Bundle b("embed step");
    const auto* blocks = u.data();
    b.add(korch::TypedAction("A").reads_guard_cells(1).on_box([blocks](const korch::ActionContext&, const auto& box) {
      stencil(blocks[box.block_id()], box.lo()[0], box.hi()[0], box.lo()[1], box.hi()[1]);
    }));
    return b;
  }
  bool same_as(const std::vector<BlockStorage>& other) const {
    for (std::size_t b = 0; b < u.size(); ++b)
      for (int j = guard; j < guard + cells; ++j)
        for (int i = guard; i < guard + cells; ++i)
          if (u[b](i, j, 0, 1) != other[b](i, j, 0, 1)) return false;
    return true;
  }
};

int run(const korch::bench::EmbedBenchArgs& args) {
  const std::string load_before = load_average();
  Code code(args.blocks, args.cells);
  korch::BlockList source = code.list();
  const korch::Bundle bundle = code.bundle();
  korch::Runtime runtime;
  const auto two = korch::configurations::get("cpu_only");
  auto one = two;
  one.teams[0].initial_threads = 1;

  // Each variant's result must be the plain loop's.
  Code reference(args.blocks, args.cells);
  reference.step_serial();
  runtime.execute(bundle, two, source);
  if (!code.same_as(reference.u)) throw korch::Error("embed bench: korch's step differs from the plain loop");

  if (args.every_team) {
    // Idle threads: every team and helper team started, though the cycles use one team.
    const long rss0 = resident_kib();
    const auto t0 = Clock::now();
    for (unsigned i = 0; i < runtime.options().n_teams; ++i) runtime.team(i);
    for (unsigned i = 0; i < runtime.options().n_helpers; ++i) runtime.helper_team(i);
    std::printf("  every team started: %.0f us, resident memory +%ld KiB\n", seconds_since(t0) * 1e6,
                resident_kib() - rss0);
  }
  const korch::RuntimeOptions& o = runtime.options();
  const korch::MachineShare& m = runtime.machine();
  std::printf("korch-bench-embed: %d blocks of %d^2 cells, %d guard cells, %d steps a sample, %d samples\n",
              args.blocks, args.cells, guard, args.steps, args.reps);
  std::printf(
      "  runtime: %u teams x %u threads, %u helpers x %u threads (%u cores seen, %u ranks on node); "
      "%u threads started\n",
      o.n_teams, o.threads_per_team, o.n_helpers, o.helper_threads, m.cores, m.ranks_on_node,
      runtime.started_threads());
  std::printf("  plain parallel loop: %s with %d threads\n", Kokkos::DefaultHostExecutionSpace::name(),
              Kokkos::DefaultHostExecutionSpace().concurrency());
  std::printf("  load before: %s\n", load_before.c_str());

  std::vector<double> serial, parallel, korch1, korch2;
  auto sample = [&](std::vector<double>& into, auto&& step) {
    const auto t0 = Clock::now();
    for (int s = 0; s < args.steps; ++s) step();
    into.push_back(seconds_since(t0) / args.steps);
  };
  for (int r = 0; r < args.reps; ++r) {
    sample(serial, [&] { code.step_serial(); });
    sample(korch1, [&] { runtime.execute(bundle, one, source); });
    sample(parallel, [&] { code.step_parallel(); });
    sample(korch2, [&] { runtime.execute(bundle, two, source); });
  }
  const double ps = median(serial), pp = median(parallel), k1 = median(korch1), k2 = median(korch2);
  std::printf(
      "  per step (median | best):\n"
      "    plain, serial          %8.1f us | %8.1f us\n"
      "    plain, parallel (%d)    %8.1f us | %8.1f us\n"
      "    korch, 1 thread        %8.1f us | %8.1f us\n"
      "    korch, 2 threads       %8.1f us | %8.1f us\n"
      "  ratio korch 1 thread / plain serial      %6.3f | %6.3f\n"
      "  ratio korch 2 threads / plain parallel   %6.3f | %6.3f   (goal <= 1.3)\n"
      "  ratio korch 2 threads / plain serial     %6.3f | %6.3f\n",
      ps * 1e6, smallest(serial) * 1e6, Kokkos::DefaultHostExecutionSpace().concurrency(), pp * 1e6,
      smallest(parallel) * 1e6, k1 * 1e6, smallest(korch1) * 1e6, k2 * 1e6, smallest(korch2) * 1e6, k1 / ps,
      smallest(korch1) / smallest(serial), k2 / pp, smallest(korch2) / smallest(parallel), k2 / ps,
      smallest(korch2) / smallest(serial));
  std::printf("  load after: %s\n", load_average().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The parallel plain loop is an OpenMP region right before a runtime cycle: libgomp's spinning
  // workers would take the team threads' cores (see passive_openmp.hpp).
  korch::prefer_passive_openmp_wait(argv, "KORCH_BENCH_EMBED_ACTIVE_OMP");
  korch::bench::EmbedBenchArgs args;
  const auto command_line = korch::bench::embed_bench_command_line(args);
  korch::cli::Program& program = *command_line;
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(args);
  });
}
