// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// PacketPack: one kernel over every entry of a data packet (TypedAction::on_packet) gives the same
// grid as the per-box routine, on packets of blocks and of tiles of unequal sizes, and refuses what
// it cannot address.
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

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_packet_pack {

using namespace korch;
using namespace korch::test;

namespace {

// 2-D blocks of 10 x 6 cells in tiles of 4 x 4: tiles of 4, 4 and 2 cells in x, 4 and 2 in y.
GridSpec pack_spec(int n_vars = 2) {
  GridSpec s;
  s.block_cells = {10, 6, 1};
  s.blocks = {3, 2, 1};
  s.guard = 1;
  s.guard_dims = 2;
  s.n_vars = n_vars;
  s.tile_cells = {4, 4, 0};
  return s;
}

void fill(Grid& g) {
  auto d = g.data();
  for (int b = 0; b < g.n_blocks(); ++b)
    for (int v = 0; v < g.n_vars(); ++v)
      for (std::size_t i = 0; i < d.extent(2); ++i)
        for (std::size_t j = 0; j < d.extent(3); ++j)
          for (std::size_t k = 0; k < d.extent(4); ++k)
            d(b, v, i, j, k) = 1000.0 * b + 100.0 * v + 7.0 * i + 3.0 * j + k;
}

// Device lambdas live in named functions, as CUDA requires (docs/typed-actions.md).
template <class Space>
void stencil_on_pack(const Space& space, const PacketPack& p) {
  Kokkos::parallel_for(
      p.policy(space), KOKKOS_LAMBDA(int e, int i, int j, int k) {
        if (p.updates(e, i, j, k))
          p(e, 1, i, j, k) = p(e, 0, i - 1, j, k) + 10.0 * p(e, 0, i, j, k) + 0.5 * p(e, 0, i, j + 1, k);
      });
}

// Triples u0 into u1 on the updated cells; counts the stored cells outside them that it visits.
template <class Space>
int triple_counting_outside(const Space& space, const PacketPack& pack) {
  Kokkos::View<int, DeviceMemSpace> outside("outside");
  Kokkos::parallel_for(
      pack.policy(space), KOKKOS_LAMBDA(int e, int i, int j, int k) {
        if (pack.updates(e, i, j, k))
          pack(e, 1, i, j, k) = 3.0 * pack(e, 0, i, j, k);
        else if (pack.stores(e, i, j, k))
          Kokkos::atomic_add(&outside(), 1);
      });
  space.fence();
  int outside_host = -1;
  Kokkos::deep_copy(outside_host, outside);
  return outside_host;
}

// The box routine's kernel, for a box of any space.
template <class Box>
void stencil_on_box(const Box& box) {
  auto in = box.var(0);
  auto out = box.var(1);
  using Space = std::decay_t<decltype(box.space())>;
  Kokkos::parallel_for(
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<3>>(box.space(), {box.lo()[0], box.lo()[1], box.lo()[2]},
                                                    {box.hi()[0], box.hi()[1], box.hi()[2]}),
      KOKKOS_LAMBDA(int i, int j, int k) {
        out(i, j, k) = in(i - 1, j, k) + 10.0 * in(i, j, k) + 0.5 * in(i, j + 1, k);
      });
}

// u1(i, j) = u0(i - 1, j) + 10 u0(i, j) + 0.5 u0(i, j + 1): reads guard cells below x and above y.
TypedAction stencil_action() {
  return TypedAction("A")
      .on_box([](const ActionContext&, const auto& box) { stencil_on_box(box); })
      .on_packet([](const ActionContext& ctx, const PacketPack& p) {
        REQUIRE(p.carries(0));
        REQUIRE(p.carries(1));
        stencil_on_pack(ctx.device_space(), p);
      })
      .reads_guard_cells(1);
}

bool same_grid(const Grid& a, const Grid& b) {
  auto x = a.data();
  auto y = b.data();
  for (std::size_t n = 0; n < x.size(); ++n)
    if (x.data()[n] != y.data()[n]) return false;
  return true;
}

struct Pools {
  MemoryPool pinned{"pinned", PoolMemory::pinned_host};
  MemoryPool device{"device", PoolMemory::device};
};

}  // namespace

TEST_CASE("PacketPack: one kernel per packet gives the box routine's grid on device and mixed configurations") {
  Runtime rt;
  Bundle bundle("pack");
  bundle.add(stencil_action());
  Grid reference(pack_spec());
  fill(reference);
  rt.execute(bundle, configurations::get("cpu_only"), reference);
  for (const char* name : {"gpu_only", "cpu_gpu_data_parallel"}) {
    CAPTURE(std::string(name));
    Grid g(pack_spec());
    fill(g);
    rt.execute(bundle, configurations::get(name), g);
    CHECK(same_grid(g, reference));
  }
}

TEST_CASE("PacketPack: a packet of tiles of unequal sizes: each entry's own box, nothing outside it written") {
  ThreadSpaces spaces;
  ActionParameters parameters;
  const std::string team = "test team";
  const ActionContext ctx{0, team, 0, 1, spaces, parameters};
  Pools pools;
  Grid g(pack_spec());
  fill(g);
  PacketVariables vars;
  vars.copy_in = {0};
  vars.copy_in_out = {1};
  DataPacket p(g, DataType::packet_of_tiles, vars, pools.pinned, pools.device);
  const int n_tiles = static_cast<int>(g.tiles_of(0).size());
  REQUIRE(n_tiles == 6);  // 3 x 2 tiles: 4, 4, 2 by 4, 2
  for (int t = 0; t < n_tiles; ++t) p.add_tile(1, t);
  p.pack();
  DataMover{MoveDirection::host_to_device}(p, spaces.device());
  const PacketPack pack(p);
  CHECK(pack.size() == 6);
  CHECK(pack.extent(0) == 4);
  CHECK(pack.extent(1) == 4);
  CHECK(pack.extent(2) == 1);
  CHECK_FALSE(pack.carries(2));
  CHECK(triple_counting_outside(spaces.device(), pack) == 0);  // a tile's entry stores only its box
  DataMover{MoveDirection::device_to_host}(p, spaces.device());
  Unpacker()(p);
  auto d = g.data();
  const auto& m = g.block(1);
  bool all = true;
  for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
    for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j) all = all && d(1, 1, i, j, 0) == 3.0 * d(1, 0, i, j, 0);
  CHECK(all);
  CHECK(d(0, 1, 1, 1, 0) == 1000.0 * 0 + 100.0 + 7.0 + 3.0);  // block 0 untouched
}

TEST_CASE("PacketPack: a packet not on the device, or a source of more variables than it addresses, is an Error") {
  Pools pools;
  Grid small(pack_spec());
  PacketVariables vars;
  vars.copy_in_out = {0};
  DataPacket p(small, DataType::packet_of_blocks, vars, pools.pinned, pools.device);
  p.add_block(0);
  p.pack();
  CHECK(contains(error_of([&] { (void)PacketPack(p); }), "device_entries()"));

  Grid wide(pack_spec(PacketPack::max_variables + 1));
  ThreadSpaces spaces;
  DataPacket q(wide, DataType::packet_of_blocks, vars, pools.pinned, pools.device);
  q.add_block(0);
  q.pack();
  DataMover{MoveDirection::host_to_device}(q, spaces.device());
  const std::string message = error_of([&] { (void)PacketPack(q); });
  CHECK(contains(message, "at most 64 variables and the source has 65"));
  CHECK(contains(message, "use on_packet_entry or on_box"));
}

}  // namespace test_packet_pack
