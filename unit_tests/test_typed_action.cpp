// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Typed action routines: dispatch by item type, box views of tiles, blocks and packet entries, and
// the errors for items an action does not cover.
#include "test_error_support.hpp"
#include "test_runtime_support.hpp"

#include <korch/backend/memory_pool.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/data_mover.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>
#include <korch/unpacker.hpp>

#include <string>
#include <vector>

using namespace korch;
using namespace korch::test;

namespace {

GridSpec spec() {
  GridSpec s;
  s.block_cells = {8, 8, 4};
  s.blocks = {2, 2, 1};
  s.guard = 1;
  s.n_vars = 3;
  s.tile_cells = {4, 4, 0};
  return s;
}

// out(i, j, k) = in(i - 1, j, k) + 10 in(i, j, k): a stencil that reads the guard cell below x.
template <class Space, class View>
void shifted_sum(const Space& space, View out, View in, const int lo[3], const int hi[3]) {
  using Policy = Kokkos::MDRangePolicy<Space, Kokkos::Rank<3>>;
  Kokkos::parallel_for(
      "korch test shifted sum", Policy(space, {lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}),
      KOKKOS_LAMBDA(int i, int j, int k) { out(i, j, k) = in(i - 1, j, k) + 10.0 * in(i, j, k); });
}

double expected_shifted_sum(const Grid& g, int b, int i, int j, int k) {
  return g.data()(b, 0, i - 1, j, k) + 10.0 * g.data()(b, 0, i, j, k);
}

// A thread's context outside a runtime, for calling routines directly.
struct DirectCall {
  ThreadSpaces spaces;
  ActionParameters parameters;
  std::string team = "test team";
  ActionContext context{0, team, 0, 1, spaces, parameters};
};

struct Pools {
  MemoryPool pinned{"pinned", PoolMemory::pinned_host};
  MemoryPool device{"device", PoolMemory::device};
};

// Packs `blocks` (or their first tile each) with v0 in and v1 in and out, runs `routine` on the packet on
// the device and unpacks the result into the grid.
void run_on_packet(const ActionRoutine& routine, DirectCall& call, Pools& pools, Grid& g, DataType type,
                   const std::vector<int>& blocks) {
  PacketVariables vars;
  vars.copy_in = {0};
  vars.copy_in_out = {1};  // not copy_out: the cells the routine leaves alone keep their values
  DataPacket p(g, type, vars, pools.pinned, pools.device);
  for (int b : blocks) {
    if (type == DataType::packet_of_blocks)
      p.add_block(b);
    else
      p.add_tile(b, 0);
  }
  p.pack();
  DataMover{MoveDirection::host_to_device}(p, call.spaces.device());
  routine(call.context, p);
  DataMover{MoveDirection::device_to_host}(p, call.spaces.device());
  Unpacker()(p);
}

ActionRoutine shifted_sum_action() {
  return TypedAction("shifted sum")
      .reads_guard_cells()
      .on_box([](const ActionContext&, const auto& box) {
        shifted_sum(box.space(), box.var(1), box.var(0), box.lo(), box.hi());
      })
      .routine();
}

}  // namespace

TEST_CASE(
    "TypedAction: one box routine updates exactly a tile's box, a block's interior and each packet entry's "
    "interior, in the indices of the Views it is given") {
  Grid g(spec());
  fill_pattern(g);
  const ActionRoutine routine = shifted_sum_action();
  DirectCall call;
  Pools pools;
  Tile tile(g, 0, 3);
  routine(call.context, tile);
  Block block(g, 1);
  routine(call.context, block);
  run_on_packet(routine, call, pools, g, DataType::packet_of_blocks, {2, 3});
  const auto h = g.data();
  for (int b = 0; b < g.n_blocks(); ++b) {
    const auto& m = g.block(b);
    for (int i = 0; i < m.stored.hi[0]; ++i)
      for (int j = 0; j < m.stored.hi[1]; ++j)
        for (int k = 0; k < m.stored.hi[2]; ++k) {
          const Box& updated = b == 0 ? tile.box() : m.interior;
          const bool inside = i >= updated.lo[0] && i < updated.hi[0] && j >= updated.lo[1] && j < updated.hi[1] &&
                              k >= updated.lo[2] && k < updated.hi[2];
          const double want =
              inside ? expected_shifted_sum(g, b, i, j, k) : 0.25 * b + 0.5 + 0.01 * i + 0.02 * j + 0.03 * k;
          INFO("block " << b << " cell " << i << " " << j << " " << k);
          REQUIRE(h(b, 1, i, j, k) == want);
        }
  }
  CHECK(pools.pinned.outstanding_bytes() == 0);
}

TEST_CASE("TypedAction: the routine for the item's own type is chosen over the box routine") {
  Grid g(spec());
  std::vector<std::string> calls;
  const ActionRoutine routine =
      TypedAction("choose")
          .on_tile([&](const ActionContext&, Tile& t) { calls.push_back("tile " + std::to_string(t.tile_index())); })
          .on_box([&](const ActionContext&, const auto& box) {
            calls.push_back(std::string(box.in_packet ? "packet box " : "grid box ") + std::to_string(box.block_id()) +
                            " " + std::to_string(box.tile_index()));
          })
          .routine();
  DirectCall call;
  Pools pools;
  Tile tile(g, 1, 2);
  routine(call.context, tile);
  Block block(g, 3);
  routine(call.context, block);
  run_on_packet(routine, call, pools, g, DataType::packet_of_tiles, {0});
  CHECK(calls == std::vector<std::string>{"tile 2", "grid box 3 -1", "packet box 0 0"});
}

TEST_CASE("TypedAction: a packet entry routine gets each entry with its interior relative to the entry") {
  Grid g(spec());
  std::vector<Box> interiors;
  std::vector<int> blocks;
  const ActionRoutine routine = TypedAction("entries")
                                    .on_packet_entry([&](const ActionContext&, const PacketEntry& e) {
                                      interiors.push_back(e.interior());
                                      blocks.push_back(e.block_id());
                                      CHECK(e.stored().lo == std::array<int, 3>{0, 0, 0});
                                      CHECK(e.var(0).extent(0) == static_cast<std::size_t>(e.stored().hi[0]));
                                    })
                                    .routine();
  DirectCall call;
  Pools pools;
  run_on_packet(routine, call, pools, g, DataType::packet_of_blocks, {3, 1});
  CHECK(blocks == std::vector<int>{3, 1});
  REQUIRE(interiors.size() == 2);
  CHECK(interiors[0] == g.block(3).interior);  // a block's stored box starts at 0 in the grid too
}

TEST_CASE(
    "TypedAction: an item no routine covers fails with an error naming the action, the item and the routine "
    "to add") {
  Grid g(spec());
  const ActionRoutine tiles_only = TypedAction("tiles only").on_tile([](const ActionContext&, Tile&) {}).routine();
  DirectCall call;
  Block block(g, 2);
  CHECK_THROWS_WITH_AS(tiles_only(call.context, block),
                       doctest::Contains("action 'tiles only' has routines for tiles only, but was given block 2"),
                       Error);
  CHECK_THROWS_WITH_AS(tiles_only(call.context, block), doctest::Contains("add on_block(...) or on_box(...)"), Error);
  Pools pools;
  CHECK_THROWS_WITH_AS(
      run_on_packet(tiles_only, call, pools, g, DataType::packet_of_tiles, {0}),
      doctest::Contains("its entries have no Tile form: add on_packet(...), on_packet_entry(...) or on_box(...)"),
      Error);
  const ActionRoutine packets_only =
      TypedAction("packets only").on_packet_entry([](const ActionContext&, const PacketEntry&) {}).routine();
  Tile tile(g, 0, 0);
  CHECK_THROWS_WITH_AS(packets_only(call.context, tile),
                       doctest::Contains("'packets only' has routines for packet entries only, but was given tile"),
                       Error);
  ActionMetadata metadata(0);
  CHECK_THROWS_WITH_AS(packets_only(call.context, metadata),
                       doctest::Contains("a TypedAction takes tiles, blocks and data packets"), Error);
}

TEST_CASE("TypedAction: an action that reads guard cells refuses the entries of a packet of tiles") {
  Grid g(spec());
  DirectCall call;
  Pools pools;
  CHECK_THROWS_WITH_AS(run_on_packet(shifted_sum_action(), call, pools, g, DataType::packet_of_tiles, {1}),
                       doctest::Contains("action 'shifted sum' reads guard cells, but data packet"), Error);
  CHECK(pools.device.outstanding_bytes() == 0);  // the failed packet still returned its buffers
}

TEST_CASE("TypedAction: an action without a name or without any routine is refused when it is built") {
  CHECK_THROWS_WITH_AS(TypedAction("").on_tile([](const ActionContext&, Tile&) {}).routine(),
                       doctest::Contains("has no name"), Error);
  CHECK_THROWS_WITH_AS(TypedAction("empty").routine(), doctest::Contains("TypedAction 'empty': no routine was given"),
                       Error);
}

TEST_CASE("TypedAction: a box routine gives the same grid on host, device and mixed configurations") {
  const auto affine = TypedAction("A").on_box([](const ActionContext&, const auto& box) {
    apply_box(box.space(), box.var(0), box.var(0), box.lo()[0], box.hi()[0], box.lo()[1], box.hi()[1], box.lo()[2],
              box.hi()[2], 2.0, 0.0, 1.0);
  });
  Runtime rt;
  Grid reference(spec());
  fill_pattern(reference);
  apply_reference(reference, {Affine{"A", 0, 0, 2.0, 0.0, 1.0}});
  for (const char* name : {"cpu_only", "gpu_only", "cpu_gpu_data_parallel"}) {
    Grid g(spec());
    fill_pattern(g);
    Bundle bundle("typed");
    bundle.add(affine);
    rt.execute(bundle, configurations::get(name), g);
    INFO(name);
    CHECK(g.max_interior_difference(reference) == 0.0);
  }
}

TEST_CASE("TypedAction: an item the action does not cover fails the runtime cycle with the action's error") {
  Runtime rt;
  Grid g(spec());
  Bundle bundle("tiles only");
  bundle.add(TypedAction("A").on_tile([](const ActionContext&, Tile&) {}));
  const std::string message = error_of([&] { rt.execute(bundle, configurations::get("gpu_only"), g); });
  CHECK(contains(message, "action 'A' has routines for tiles only, but was given data packet"));
  CHECK(contains(message, "add on_packet(...), on_packet_entry(...) or on_box(...)"));
  CHECK(rt.pinned_pool().outstanding_bytes() == 0);
}
