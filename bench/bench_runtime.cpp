// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Runtime overhead: the CPU-only configuration applying a per-cell update to 16^3 tiles, against a
// plain Kokkos loop over the same tiles with the same number of threads (Kokkos' default host
// space: OpenMP with OMP_NUM_THREADS threads on the openmp build, Serial on the serial build),
// measured in the same run; and against the same per-tile code run by as many std::threads taking
// tiles from an atomic counter (no teams, no queues). All three run the same per-tile code, so the
// ratios are the runtime's cost (goal <= 1.15). One more runtime variant writes each tile as a
// Kokkos kernel on the action's host instance, which adds Kokkos' dispatch per tile.
//
//   korch-bench-runtime [threads] [repetitions]
#include "bench_command_lines.hpp"
#include <korch/backend/passive_openmp.hpp>
#include <korch/cli/program.hpp>
#include <korch/block.hpp>
#include <korch/bundle.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/grid.hpp>
#include <korch/runtime.hpp>
#include <korch/tile.hpp>

#include "bench_timing.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <thread>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace {

using korch::bench::Clock;
using korch::bench::median;

struct Update {
  int iterations;
  KOKKOS_INLINE_FUNCTION double operator()(double u) const {
    for (int n = 0; n < iterations; ++n) u = 0.999 * u + 0.001;
    return u;
  }
};

// The per-tile work, the same code in the plain loop, on the bare std::threads and in the runtime's
// action: the cells of box [i0,i1) x [j0,j1) x [k0,k1) of variable 0 of one block's storage. The
// view is taken by value: its pointer and strides are then locals that the stores cannot alias, and
// the k loop vectorizes (through a reference it did not: 1.5x slower).
template <class View>
KOKKOS_INLINE_FUNCTION void update_cells(const View d, int i0, int i1, int j0, int j1, int k0, int k1,
                                         const Update update) {
  for (int i = i0; i < i1; ++i)
    for (int j = j0; j < j1; ++j)
      for (int k = k0; k < k1; ++k) d(0, i, j, k) = update(d(0, i, j, k));
}

void update_tile(const korch::Tile& tile, const Update update) {
  const korch::Box& b = tile.box();
  update_cells(tile.data(), b.lo[0], b.hi[0], b.lo[1], b.hi[1], b.lo[2], b.hi[2], update);
}

// The same tile as a Kokkos kernel on the action's own Serial instance (rows i as a RangePolicy):
// how an action would usually be written; the difference to update_tile is Kokkos' dispatch.
template <class Space>
void update_tile_kernel(const Space& space, const korch::Tile& tile, const Update update) {
  const korch::Box& b = tile.box();
  const auto d = tile.data();
  const int j0 = b.lo[1], j1 = b.hi[1], k0 = b.lo[2], k1 = b.hi[2];
  Kokkos::parallel_for("tile update", Kokkos::RangePolicy<Space>(space, b.lo[0], b.hi[0]),
                       [=](int i) { update_cells(d, i, i + 1, j0, j1, k0, k1, update); });
}

using Args = korch::bench::RuntimeBenchArgs;
using Host = Kokkos::DefaultHostExecutionSpace;
using Tiles = std::vector<std::shared_ptr<korch::Tile>>;
using BoxView = Kokkos::View<int* [7], Kokkos::HostSpace>;

// The runtime's fixed cost per cycle: the same cycle with an action that does nothing.
void report_fixed_cost(korch::Grid& grid, std::size_t n_tiles, unsigned threads, int reps) {
  korch::Runtime rt(korch::RuntimeOptions{1, threads, 1, 1, {}, 0, 0});
  auto config = korch::configurations::get("cpu_only");
  config.teams[0].initial_threads = threads;
  korch::Bundle bundle("bench");
  bundle.add(korch::ActionRoutine("A", [](const korch::ActionContext&, korch::DataItem&) {}));
  std::vector<double> cycle;
  for (int r = 0; r < 10 * reps; ++r) {
    const auto t0 = Clock::now();
    rt.execute(bundle, config, grid);
    cycle.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::printf("  fixed cost of one cycle over %zu tiles (no-op action): median %.1f us, best %.1f us\n", n_tiles,
              median(cycle) * 1e6, *std::min_element(cycle.begin(), cycle.end()) * 1e6);
}

// Each tile's block and box (block, i0, i1, j0, j1, k0, k1), for the plain loop's kernel.
BoxView tile_boxes(const Tiles& tiles) {
  std::vector<std::array<int, 7>> boxes;
  for (const auto& t : tiles) {
    const auto& b = t->box();
    boxes.push_back({t->block_id(), b.lo[0], b.hi[0], b.lo[1], b.hi[1], b.lo[2], b.hi[2]});
  }
  BoxView box_view("boxes", boxes.size());
  for (std::size_t i = 0; i < boxes.size(); ++i)
    for (int k = 0; k < 7; ++k) box_view(i, k) = boxes[i][static_cast<std::size_t>(k)];
  return box_view;
}

// ---- plain Kokkos loop over the same tiles ----
double time_plain_loop(const korch::Grid::HostData data, const BoxView box_view, const Update update) {
  const auto t0 = Clock::now();
  Kokkos::parallel_for("plain tiles", Kokkos::RangePolicy<Host>(0, static_cast<int>(box_view.extent(0))), [=](int t) {
    const int blk = box_view(t, 0);
    const int i0 = box_view(t, 1), i1 = box_view(t, 2), j0 = box_view(t, 3), j1 = box_view(t, 4);
    const int k0 = box_view(t, 5), k1 = box_view(t, 6);
    auto d = Kokkos::subview(data, blk, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
    update_cells(d, i0, i1, j0, j1, k0, k1, update);
  });
  Kokkos::fence();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// ---- the same per-tile kernel on `threads` std::threads taking tiles from a counter ----
double time_std_threads(const Tiles& tiles, unsigned threads, const Update update) {
  const auto t0 = Clock::now();
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < tiles.size(); i = next++) update_tile(*tiles[i], update);
    });
  }
  for (auto& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Seconds per repetition of each variant of the per-cell update.
struct UpdateTimes {
  std::vector<double> plain, threaded, runtime, runtime_kernel;
};

void print_update_times(int iterations, int reps, unsigned threads, const UpdateTimes& times) {
  const double p = median(times.plain), h = median(times.threaded), q = median(times.runtime),
               qk = median(times.runtime_kernel);
  const double pm = *std::min_element(times.plain.begin(), times.plain.end());
  const double hm = *std::min_element(times.threaded.begin(), times.threaded.end());
  const double qm = *std::min_element(times.runtime.begin(), times.runtime.end());
  const double qkm = *std::min_element(times.runtime_kernel.begin(), times.runtime_kernel.end());
  std::printf(
      "  per-cell update, %2d fused iterations (median | best of %d):\n"
      "    plain Kokkos loop          %8.3f ms | %8.3f ms\n"
      "    same code, %u std::threads  %8.3f ms | %8.3f ms\n"
      "    runtime, cpu_only          %8.3f ms | %8.3f ms\n"
      "    runtime, kernel per tile   %8.3f ms | %8.3f ms\n"
      "    ratio runtime / plain loop    %6.3f | %6.3f   (goal <= 1.15)\n"
      "    ratio runtime / std::threads  %6.3f | %6.3f\n"
      "    ratio kernel per tile / plain %6.3f | %6.3f   (host task space dispatch per tile included)\n",
      iterations, reps, p * 1e3, pm * 1e3, threads, h * 1e3, hm * 1e3, q * 1e3, qm * 1e3, qk * 1e3, qkm * 1e3, q / p,
      qm / pm, q / h, qm / hm, qk / p, qkm / pm);
}

// The per-cell update of `iterations` fused iterations by the four variants.
void compare_update(korch::Grid& grid, const Tiles& tiles, unsigned threads, int reps, int iterations) {
  const Update update{iterations};
  const BoxView box_view = tile_boxes(tiles);
  korch::Runtime rt(korch::RuntimeOptions{1, threads, 1, 1, {}, 0, 0});
  auto config = korch::configurations::get("cpu_only");
  config.teams[0].initial_threads = threads;
  korch::Bundle bundle("bench"), kernel_bundle("bench, a Kokkos kernel per tile");
  bundle.add(korch::ActionRoutine("A", [update](const korch::ActionContext&, korch::DataItem& item) {
    update_tile(static_cast<korch::Tile&>(item), update);
  }));
  kernel_bundle.add(korch::ActionRoutine("A", [update](const korch::ActionContext& ctx, korch::DataItem& item) {
    update_tile_kernel(ctx.host_space(), static_cast<korch::Tile&>(item), update);
  }));
  // The variants take turns in every repetition, so that load from other processes on the
  // machine hits them alike; medians are reported.
  UpdateTimes times;
  for (int r = 0; r < reps; ++r) {
    times.plain.push_back(time_plain_loop(grid.data(), box_view, update));
    times.threaded.push_back(time_std_threads(tiles, threads, update));
    // ---- the CPU-only configuration ----
    auto t0 = Clock::now();
    rt.execute(bundle, config, grid);
    times.runtime.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    // ---- the CPU-only configuration, each tile a Kokkos kernel on the thread's instance ----
    t0 = Clock::now();
    rt.execute(kernel_bundle, config, grid);
    times.runtime_kernel.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  print_update_times(iterations, reps, threads, times);
}

int run(const Args& args) {
  const unsigned threads =
      args.threads > 0 ? args.threads : static_cast<unsigned>(std::max(1, korch::compat::concurrency(Host())));
  const int reps = args.reps;
  korch::GridSpec spec;
  spec.block_cells = {32, 32, 32};
  spec.blocks = {4, 4, 2};
  spec.guard = 1;
  spec.n_vars = 1;
  spec.tile_cells = {16, 16, 16};
  korch::Grid grid(spec);
  grid.fill([](int, int, int, int, int) { return 1.0; });
  const auto tiles = korch::all_tiles(grid);
  const char* wait = std::getenv("OMP_WAIT_POLICY");
  std::printf("OMP_WAIT_POLICY=%s\n", wait ? wait : "(unset)");
  std::printf(
      "korch-bench-runtime: %zu tiles of 16^3 cells, %u threads (plain loop on %s with %d threads), %d repetitions\n",
      tiles.size(), threads, Host::name(), korch::compat::concurrency(Host()), reps);
  report_fixed_cost(grid, tiles.size(), threads, reps);
  for (int iterations : {1, 16}) compare_update(grid, tiles, threads, reps, iterations);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The plain loop is an OpenMP region right before each runtime cycle: without this its idle
  // workers would spin on the team threads' cores (KORCH_BENCH_RUNTIME_ACTIVE_OMP=1 to see that).
  korch::prefer_passive_openmp_wait(argv, "KORCH_BENCH_RUNTIME_ACTIVE_OMP");
  Args args;
  const auto command_line = korch::bench::runtime_bench_command_line(args);
  korch::cli::Program& program = *command_line;
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(args);
  });
}
