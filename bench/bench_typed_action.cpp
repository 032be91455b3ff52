// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cost of calling an action through a TypedAction (typed_action.hpp) against calling the same
// C++ code directly, per item: tiles in host memory (direct call, the cast ladder routines were
// written as before, on_tile, a box routine) and the entries of a packet of blocks in device memory
// (direct loop over the entries, on_packet_entry, a box routine). Every variant runs the same
// per-cell code on the same items; the variants alternate within each round (in rotating order),
// each keeps its fastest of a few samples per round, and the program prints each variant's median
// time per item and the median of its per-round ratio to the direct call, with the machine's load
// average before and after.
//
//   korch-bench-typed_action [rounds] [--cells N]
#include <korch/backend/memory_pool.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/cli/program.hpp>
#include <korch/cli/validators.hpp>
#include <korch/data_mover.hpp>
#include <korch/grid.hpp>
#include <korch/typed_action.hpp>

#include "bench_timing.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using korch::bench::Clock;
using korch::bench::median;
using korch::bench::seconds_since;

using korch::bench::load_average;

// The per-cell work of every variant: one relaxation step of variable 0 over a box, on the host.
void relax_host(const korch::HostCellVar u, const korch::Box& b) {
  for (int i = b.lo[0]; i < b.hi[0]; ++i)
    for (int j = b.lo[1]; j < b.hi[1]; ++j)
      for (int k = b.lo[2]; k < b.hi[2]; ++k) u(i, j, k) = 0.999 * u(i, j, k) + 0.001;
}

// The same as a kernel on the thread's device instance (a named function, as CUDA's lambdas need).
void relax_device(const korch::DeviceTaskSpace& space, const korch::DataPacket::DeviceVar u, const korch::Box& b) {
  using Policy = Kokkos::MDRangePolicy<korch::DeviceTaskSpace, Kokkos::Rank<3>>;
  Kokkos::parallel_for(
      "korch bench relax", Policy(space, {b.lo[0], b.lo[1], b.lo[2]}, {b.hi[0], b.hi[1], b.hi[2]}),
      KOKKOS_LAMBDA(int i, int j, int k) { u(i, j, k) = 0.999 * u(i, j, k) + 0.001; });
}

korch::HostCellVar host_var(const korch::Grid& grid, int block, int var) {
  const auto e = grid.stored_extent();
  const std::size_t n =
      static_cast<std::size_t>(e[0]) * static_cast<std::size_t>(e[1]) * static_cast<std::size_t>(e[2]);
  return korch::HostCellVar(grid.block_pointer(block) + static_cast<std::size_t>(var) * n, e[0], e[1], e[2]);
}

struct Variant {
  std::string name;
  std::function<void()> pass;  // one call per item
  std::size_t items;
  std::vector<double> per_item;  // seconds per item, one per round
  std::vector<double> ratio;     // against the round's direct call
};

// Runs the variants of one group for `rounds` rounds; variant 0 is the direct call the others are
// compared with. In a round each variant is timed `samples` times, `passes` passes a sample, the
// variants alternating in rotating order, and keeps its fastest sample: on a loaded machine a
// sample that lost its core to another process says nothing about the call.
void measure(std::vector<Variant>& group, int rounds, int passes) {
  constexpr int samples = 5;
  for (auto& v : group) v.pass();  // warm-up
  for (int r = 0; r < rounds; ++r) {
    std::vector<double> best(group.size(), 1e300);
    for (int s = 0; s < samples; ++s) {
      for (std::size_t n = 0; n < group.size(); ++n) {
        const std::size_t i = (n + static_cast<std::size_t>(r + s)) % group.size();
        const auto t0 = Clock::now();
        for (int p = 0; p < passes; ++p) group[i].pass();
        best[i] =
            std::min(best[i], seconds_since(t0) / (static_cast<double>(passes) * static_cast<double>(group[i].items)));
      }
    }
    for (std::size_t i = 0; i < group.size(); ++i) {
      group[i].per_item.push_back(best[i]);
      group[i].ratio.push_back(best[i] / best[0]);
    }
  }
}

void print(const char* title, const std::vector<Variant>& group) {
  std::printf("%s\n", title);
  for (const auto& v : group)
    std::printf("  %-28s %10.1f ns/item   ratio to direct %.3f\n", v.name.c_str(), 1e9 * median(v.per_item),
                median(v.ratio));
}

// The box routine that both groups call: on a tile's box on the host, on a packet's boxes on the device.
korch::ActionRoutine box_routine() {
  return korch::TypedAction("relax")
      .on_grid_box(
          [](const korch::ActionContext&, const korch::GridBoxView& box) { relax_host(box.var(0), box.box()); })
      .on_packet_box([](const korch::ActionContext&, const korch::PacketBoxView& box) {
        relax_device(box.space(), box.var(0), box.box());
      })
      .routine();
}

// The tile variants, measured.
std::vector<Variant> measure_tile_variants(const korch::Grid& grid, const korch::ActionContext& ctx,
                                           const korch::ActionRoutine& on_box, int cells, int rounds) {
  const auto tiles = korch::all_tiles(grid);
  const korch::ActionRoutine ladder("relax", [](const korch::ActionContext&, korch::DataItem& item) {
    if (auto* t = dynamic_cast<korch::Tile*>(&item))
      relax_host(host_var(t->grid(), t->block_id(), 0), t->box());
    else
      throw korch::Error("relax: not a tile");
  });
  const korch::ActionRoutine on_tile = korch::TypedAction("relax")
                                           .on_tile([](const korch::ActionContext&, korch::Tile& t) {
                                             relax_host(host_var(t.grid(), t.block_id(), 0), t.box());
                                           })
                                           .routine();
  auto over_tiles = [&](const korch::ActionRoutine& r) {
    return [&tiles, &r, &ctx] {
      for (const auto& t : tiles) r(ctx, *t);
    };
  };
  std::vector<Variant> host{{"direct call",
                             [&] {
                               for (const auto& t : tiles) relax_host(host_var(grid, t->block_id(), 0), t->box());
                             },
                             tiles.size(),
                             {},
                             {}},
                            {"ActionRoutine, cast ladder", over_tiles(ladder), tiles.size(), {}, {}},
                            {"TypedAction on_tile", over_tiles(on_tile), tiles.size(), {}, {}},
                            {"TypedAction box routine", over_tiles(on_box), tiles.size(), {}, {}}};
  // About half a million cell updates per sample, whatever the tile size.
  const int tile_passes =
      std::max(1, 500000 / static_cast<int>(tiles.size() * static_cast<std::size_t>(cells * cells * cells)));
  measure(host, rounds, tile_passes);
  for (auto& v : host) v.pass = nullptr;  // it refers to this function's locals
  return host;
}

// The packet variants over one packet of every block in device memory, measured.
std::vector<Variant> measure_packet_variants(korch::Grid& grid, korch::ThreadSpaces& spaces,
                                             const korch::ActionContext& ctx, const korch::ActionRoutine& on_box,
                                             int rounds) {
  korch::MemoryPool pinned("bench pinned", korch::PoolMemory::pinned_host),
      device("bench device", korch::PoolMemory::device);
  korch::PacketVariables vars;
  vars.copy_in_out = {0};
  auto packet = std::make_shared<korch::DataPacket>(grid, korch::DataType::packet_of_blocks, vars, pinned, device);
  for (int b = 0; b < grid.n_blocks(); ++b) packet->add_block(b);
  packet->pack();
  korch::DataMover{korch::MoveDirection::host_to_device}(*packet, spaces.device());
  const korch::ActionRoutine on_entry =
      korch::TypedAction("relax")
          .on_packet_entry([](const korch::ActionContext& c, const korch::PacketEntry& e) {
            relax_device(c.device_space(), e.var(0), e.interior());
          })
          .routine();
  std::vector<Variant> packets{{"direct loop over entries",
                                [&] {
                                  for (std::size_t e = 0; e < packet->size(); ++e) {
                                    const auto& m = packet->entry(e);
                                    korch::Box b;
                                    for (int d = 0; d < 3; ++d) {
                                      b.lo[d] = m.interior_lo[d] - m.lo[d];
                                      b.hi[d] = m.interior_hi[d] - m.lo[d];
                                    }
                                    relax_device(spaces.device(), packet->device_var(e, 0), b);
                                  }
                                  spaces.device().fence();
                                },
                                packet->size(),
                                {},
                                {}},
                               {"TypedAction on_packet_entry", [&] { on_entry(ctx, *packet); }, packet->size(), {}, {}},
                               {"TypedAction box routine", [&] { on_box(ctx, *packet); }, packet->size(), {}, {}}};
  measure(packets, rounds, 5);
  packet->release();
  for (auto& v : packets) v.pass = nullptr;  // it refers to this function's locals
  return packets;
}

int run(int rounds, int cells) {
  korch::GridSpec spec;
  spec.block_cells = {16, 16, 16};
  spec.blocks = {4, 4, 1};
  spec.guard = 1;
  spec.n_vars = 1;
  spec.tile_cells = {cells, cells, cells};
  korch::Grid grid(spec);
  grid.fill([](int b, int, int i, int j, int k) { return 0.001 * (b + i + j + k); });
  korch::ThreadSpaces spaces;
  const korch::ActionParameters parameters;
  const std::string team = "bench";
  const korch::ActionContext ctx(0, team, 0, 1, spaces, parameters);
  std::printf("korch-bench-typed_action: %d blocks of 16^3 cells, tiles of %d^3 cells; %d rounds\n", grid.n_blocks(),
              cells, rounds);
  std::printf("load average at start: %s\n", load_average().c_str());

  const korch::ActionRoutine on_box = box_routine();
  const std::vector<Variant> host = measure_tile_variants(grid, ctx, on_box, cells, rounds);
  const std::vector<Variant> packets = measure_packet_variants(grid, spaces, ctx, on_box, rounds);

  print("tiles in host memory (per tile):", host);
  print("entries of a packet of blocks in device memory (per entry, fence per packet):", packets);
  std::printf("load average at end: %s\n", load_average().c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  korch::cli::Program program("korch-bench-typed_action",
                              "the time per item of an action called through a TypedAction (on_tile, on_packet_entry,\n"
                              "a box routine) against a direct call of the same code, measured in the same run.");
  int rounds = 15;
  int cells = 4;
  CLI::App& app = program.app();
  korch::cli::add_integer(app, "rounds", rounds, "interleaved rounds; medians are kept", 1);
  korch::cli::add_integer(app, "--cells", cells, "tile edge in cells", 1, 16);
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(rounds, cells);
  });
}
