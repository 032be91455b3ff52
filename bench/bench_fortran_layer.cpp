// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cost of calling an action through the C API and the Fortran module, against the same
// arithmetic as a direct C++ routine: one runtime, one code-owned mesh (korch::BlockList of
// Fortran-ordered blocks), cycles of the cpu_only configuration in which each tile calls
//   direct   a C++ ActionRoutine that reads the tile's view(),
//   c        a C routine through the C API's bridge (the item described, status checked),
//   fortran  a bind(c) Fortran routine through the same bridge.
// The three alternate within each round; the program prints medians over the rounds, the ratios
// to direct, the extra time per call, and the machine's load before and after.
//
//   korch-bench-fortran_layer [rounds] [cycles] [tile]    (defaults 31, 20, 8; --help)
#include "bench_timing.hpp"

#include <korch/cli/program.hpp>
#include <korch/cli/validators.hpp>

#include "c_item.hpp"  // korch::c_api::routine, the bridge korch_execute uses

#include <korch/block_list.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/korch_c.h>
#include <korch/runtime.hpp>
#include <korch/tile.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

extern "C" int korch_bench_fortran_smooth(const korch_item* item, double* u, void* user);

namespace {

constexpr int n_blocks = 32, cells = 32;

using korch::bench::load_average;

extern "C" int c_smooth(const korch_item* item, double* u, void*) {
  const auto at = [&](int v, int i, int j) -> double& {
    return u[v * item->stride[0] + (i + item->guard[0] - 1) * item->stride[1] +
             (j + item->guard[1] - 1) * item->stride[2]];
  };
  for (int j = item->lo[1]; j <= item->hi[1]; ++j)
    for (int i = item->lo[0]; i <= item->hi[0]; ++i)
      at(1, i, j) = 0.5 * (at(0, i - 1, j) + at(0, i + 1, j)) + 0.25 * at(0, i, j);
  return 0;
}

korch::ActionRoutine direct() {
  return korch::ActionRoutine("A", [](const korch::ActionContext&, korch::DataItem& item) {
    auto& t = static_cast<korch::Tile&>(item);
    const auto u = t.view();
    const auto& b = t.box();
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int i = b.lo[0]; i < b.hi[0]; ++i)
        u(1, i, j, 0) = 0.5 * (u(0, i - 1, j, 0) + u(0, i + 1, j, 0)) + 0.25 * u(0, i, j, 0);
  });
}

}  // namespace

int run(int rounds, int cycles, int tile) {
  std::printf("load average before: %s\n", load_average().c_str());
  const int e = cells + 2;
  std::vector<std::vector<double>> arrays(n_blocks, std::vector<double>(static_cast<std::size_t>(e * e * 2), 1.0));
  korch::BlockList mesh("bench", 2);
  for (auto& a : arrays) {
    korch::BlockShape s;
    s.cells = {cells, cells, 1};
    s.guard = {1, 1, 0};
    s.tile_cells = {tile, tile, 0};
    mesh.add(s, korch::BlockArray::of(a.data(), korch::IndexOrder::var_i_j_k, {2, e, e, 1}, {e * e, 1, e, e * e}));
  }
  korch::RuntimeOptions options;  // cpu_only uses one team: as many threads as this machine's 2 cores
  options.n_teams = 1;
  options.threads_per_team = 2;
  options.n_helpers = 1;
  options.helper_threads = 1;
  korch::Runtime runtime(options);
  const auto configuration = korch::configurations::get("cpu_only");
  korch::Bundle variants[3] = {korch::Bundle("direct"), korch::Bundle("c"), korch::Bundle("fortran")};
  variants[0].add(direct());
  variants[1].add(korch::c_api::routine("A", c_smooth, nullptr));
  variants[2].add(korch::c_api::routine("A", korch_bench_fortran_smooth, nullptr));
  std::vector<double> times[3];
  for (auto& b : variants) runtime.execute(b, configuration, mesh);  // warm-up
  for (int r = 0; r < rounds; ++r)
    for (int v = 0; v < 3; ++v) {
      const int which = (v + r) % 3;  // each variant in each position in turn
      times[which].push_back(korch::bench::time_once([&] {
        for (int c = 0; c < cycles; ++c) runtime.execute(variants[which], configuration, mesh);
      }));
    }
  const double calls =
      static_cast<double>(cycles) * n_blocks * ((cells + tile - 1) / tile) * ((cells + tile - 1) / tile);
  const double base = korch::bench::median(times[0]);
  std::printf(
      "%d blocks of %d^2 cells, tiles of %d^2: %.0f action calls per variant per round, %d rounds, cpu_only "
      "with %u teams x %u threads\n",
      n_blocks, cells, tile, calls, rounds, runtime.options().n_teams, runtime.options().threads_per_team);
  const char* names[3] = {"direct C++", "C via C API", "Fortran via C API"};
  for (int v = 0; v < 3; ++v) {
    const double m = korch::bench::median(times[v]);
    std::printf("  %-18s median %8.3f ms  best %8.3f ms  ratio to direct %.3f  extra per call %+.3f us\n", names[v],
                1e3 * m, 1e3 * korch::bench::smallest(times[v]), m / base, 1e6 * (m - base) / calls);
  }
  std::printf("load average after: %s\n", load_average().c_str());
  return 0;
}

int main(int argc, char** argv) {
  korch::cli::Program program("korch-bench-fortran_layer",
                              "the time per call of an action through the C API and through the Fortran module,\n"
                              "against a direct C++ routine doing the same arithmetic, alternated in each round.");
  int rounds = 31;
  int cycles = 20;
  int tile = 8;
  CLI::App& app = program.app();
  korch::cli::add_integer(app, "rounds", rounds, "rounds; medians are printed", 1);
  korch::cli::add_integer(app, "cycles", cycles, "cycles of the configuration per variant and round", 1);
  korch::cli::add_integer(app, "tile", tile, "tile edge in cells", 1);
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(rounds, cycles, tile);
  });
}
