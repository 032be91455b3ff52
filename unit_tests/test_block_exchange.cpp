// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The guard-cell exchange and the asynchronous iterator on a physics code's own blocks (a
// BlockList over the code's Views and raw arrays, blocks of different sizes) from the code's
// neighbour lists. Runs as one process and under mpirun with 2 and 3 ranks: every rank runs every
// case on its share of the blocks.
#include "test_block_exchange_support.hpp"

#include <korch/action_routine.hpp>
#include <korch/block.hpp>
#include <korch/bundle.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/decomposition.hpp>
#include <korch/device_residency.hpp>
#include <korch/error.hpp>
#include <korch/grid.hpp>
#include <korch/guard_cell_exchange.hpp>
#include <korch/guard_cell_iterator.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

using namespace korch;
using korch::test::Arrangement;
using korch::test::CodeBlocks;

namespace {

struct Case {
  Arrangement arrangement;
  std::array<int, 3> width;  // guard cells filled per side
};

std::vector<Case> cases() {
  const auto P = BoundaryKind::periodic, O = BoundaryKind::outflow;
  Arrangement flat;
  flat.dims = 2;
  flat.sizes = {{{8, 12, 8, 12}, {6, 10, 6}, {1}}};
  flat.boundary = {P, O, P};
  Arrangement solid;
  solid.dims = 3;
  solid.sizes = {{{4, 6}, {5, 3}, {4, 2, 6}}};
  solid.boundary = {P, O, P};
  Arrangement closed = flat;
  closed.boundary = {O, O, P};
  Arrangement walled = solid;
  walled.walls_y = true;
  return {{flat, {2, 2, 0}}, {solid, {2, 2, 2}}, {closed, {1, 2, 0}}, {flat, {1, 1, 0}}, {walled, {2, 2, 2}}};
}

}  // namespace

TEST_CASE("Code's blocks: the exchange fills every guard cell from the neighbour lists, across ranks") {
  const Communicator world = Communicator::world();
  for (const auto& c : cases()) {
    CodeBlocks blocks(c.arrangement, world);
    GuardCellExchange exchange(blocks.list(), blocks.neighbours(world), world, c.width);
    exchange.set_boundary_fill(blocks.wall_fill());
    CHECK(exchange.counts().neighbour_ranks <= world.size() - 1);
    if (world.size() > 1) CHECK(exchange.counts().neighbour_ranks >= 1);
    for (const auto& [first, count] : {std::pair<int, int>{0, 3}, {1, 1}}) {
      blocks.paint();
      exchange.fill(first, count);
      CHECK(blocks.wrong_guard_cells(first, count, c.width) == 0);
    }
    // Asynchronously, block by block as the messages come.
    blocks.paint();
    exchange.start(0, 2);
    for (const int b : exchange.blocks_without_messages()) exchange.fill_local(b);
    while (exchange.messages_outstanding() > 0)
      for (const int b : exchange.wait_some()) {
        exchange.fill_local(b);
        CHECK(blocks.wrong_guard_cells(0, 2, c.width, b) == 0);
      }
    exchange.finish();
    CHECK(blocks.wrong_guard_cells(0, 2, c.width) == 0);
  }
}

constexpr bool host_reads_device_memory = Kokkos::SpaceAccessibility<Kokkos::HostSpace, DeviceMemSpace>::accessible;

// Whether MPI may read device memory here: on a host build, unless the device memory guard
// (device_memory_guard.cpp) plays a GPU, whose MPI here is not GPU-aware.
bool mpi_reads_device_memory() {
  return host_reads_device_memory && std::getenv("KORCH_DEVICE_GUARD_LABELS") == nullptr;
}

TEST_CASE("Code's blocks in device memory: the exchange fills the code's device arrays, across ranks") {
  const Communicator world = Communicator::world();
  for (const auto& c : cases()) {
    CodeBlocks blocks(c.arrangement, world, true);
    REQUIRE(blocks.list().on_device());
    GuardCellExchange exchange(blocks.list(), blocks.neighbours(world), world, c.width);
    exchange.set_boundary_fill(blocks.wall_fill());
    const DeviceResidency& residency = *blocks.list().device_residency();
    CHECK_FALSE(exchange.direct_device_messages());  // automatic: this MPI reports no device memory
    for (const auto& [first, count] : {std::pair<int, int>{0, 3}, {1, 1}})
      for (const bool one_on_host : {false, true}) {
        CAPTURE(one_on_host);
        // Messages of device blocks straight from device memory (which a host build's MPI can
        // read), and staged through the host.
        const bool direct = first == 1;
        if (mpi_reads_device_memory()) {
          exchange.set_device_messages(direct ? DeviceMessages::direct : DeviceMessages::staged);
          CHECK(exchange.direct_device_messages() == direct);
        }
        const TransferBytes staged_before = exchange.device_transfers();
        blocks.paint();
        blocks.list().synchronize();  // the painted cells are in the code's arrays
        // A block written through the host copy is filled there; the others on the device.
        if (one_on_host) (void)blocks.list().block_view(0);
        const TransferBytes before = residency.transfers();
        exchange.fill(first, count);
        // Filled where they are (the code's wall fill is a host routine: then on the host copies).
        if (!c.arrangement.walls_y && !one_on_host) {
          CHECK(residency.transfers().total() == before.total());
          // Every block on the device: direct messages stage nothing, staged ones their cells.
          const std::uint64_t staged = exchange.device_transfers().total() - staged_before.total();
          if (exchange.direct_device_messages()) CHECK(staged == 0);
          if (!exchange.direct_device_messages() && exchange.counts().cells_sent > 0) CHECK(staged > 0);
        }
        // Only the device arrays are valid after a fill: the check reads them back.
        for (int b = 0; b < blocks.list().n_blocks(); ++b) CHECK_FALSE(residency.host_valid(b, 0));
        CHECK(blocks.wrong_guard_cells(first, count, c.width) == 0);
        blocks.list().synchronize();
      }
  }
}

TEST_CASE("Code's blocks in device memory: KORCH_GPU_AWARE_MPI other than auto, 0 or 1 is an error naming it") {
  const Communicator world = Communicator::world();
  CodeBlocks blocks(cases().front().arrangement, world, true);
  const NeighbourList neighbours = blocks.neighbours(world);
  ::setenv("KORCH_GPU_AWARE_MPI", "yes", 1);
  CHECK_THROWS_WITH_AS(GuardCellExchange(blocks.list(), neighbours, world),
                       doctest::Contains("KORCH_GPU_AWARE_MPI is 'yes': use auto"), Error);
  ::setenv("KORCH_GPU_AWARE_MPI", "0", 1);
  GuardCellExchange staged(blocks.list(), neighbours, world);
  CHECK_FALSE(staged.direct_device_messages());
  ::unsetenv("KORCH_GPU_AWARE_MPI");
}

TEST_CASE("Code's blocks: a boundary fill that throws on one rank fails that fill, and the next fills are right") {
  const Communicator world = Communicator::world();
  const auto c = cases().back();  // walls in y, filled by the code
  REQUIRE(c.arrangement.walls_y);
  CodeBlocks blocks(c.arrangement, world);
  GuardCellExchange exchange(blocks.list(), blocks.neighbours(world), world, c.width);
  bool fail = true;
  exchange.set_boundary_fill([&](int b, const Direction& d, int first, int count) {
    if (fail && world.rank() == 0) throw korch::Error("the code's wall failed");
    blocks.reflect(b, d, first, count);
  });
  blocks.paint();
  if (world.rank() == 0)
    CHECK_THROWS_WITH_AS(exchange.fill(0, 3), doctest::Contains("the code's wall failed"), korch::Error);
  else
    exchange.fill(0, 3);
  CHECK_FALSE(exchange.in_progress());
  fail = false;
  for (int round = 0; round < 2; ++round) {
    blocks.paint();
    exchange.fill(0, 3);
    CHECK(blocks.wrong_guard_cells(0, 3, c.width) == 0);
  }
  // The same when the code drives the fill and abandons it after the failure.
  fail = true;
  blocks.paint();
  exchange.start(0, 3);
  bool failed = false;
  try {
    for (const int b : exchange.blocks_without_messages()) exchange.fill_local(b);
    while (exchange.messages_outstanding() > 0)
      for (const int b : exchange.wait_some()) exchange.fill_local(b);
    exchange.finish();
  } catch (const korch::Error&) {
    failed = true;
    exchange.abandon();
  }
  CHECK(failed == (world.rank() == 0));
  fail = false;
  blocks.paint();
  exchange.fill(0, 3);
  CHECK(blocks.wrong_guard_cells(0, 3, c.width) == 0);
}

TEST_CASE("Code's blocks: the iterator hands out each block once its guard cells are valid") {
  const Communicator world = Communicator::world();
  Runtime runtime(RuntimeOptions{2, 2, 2, 1});
  for (const auto& c : cases()) {
    CodeBlocks blocks(c.arrangement, world);
    GuardCellExchange exchange(blocks.list(), blocks.neighbours(world), world, c.width);
    exchange.set_boundary_fill(blocks.wall_fill());
    GuardCellIterator order(exchange, 0, 3);
    Configuration conf = configurations::get("cpu_only");
    for (auto& t : conf.teams) {
      t.type = DataType::block;
      t.action = "check";
    }
    for (int cycle = 0; cycle < 2; ++cycle) {
      blocks.paint();
      std::atomic<int> wrong{0}, seen{0};
      Bundle bundle("check guards");
      bundle.add(ActionRoutine("check", [&](const ActionContext&, DataItem& item) {
        wrong += blocks.wrong_guard_cells(0, 3, c.width, dynamic_cast<Block&>(item).block_id());
        ++seen;
      }));
      runtime.execute(bundle, conf, blocks.list(), &order);
      CHECK(wrong == 0);
      CHECK(seen == blocks.list().n_blocks());
      CHECK_FALSE(exchange.in_progress());
    }
  }
}

TEST_CASE("Code's blocks: the iterator's guard cells keep the cycle's starting values while blocks handed out change") {
  const Communicator world = Communicator::world();
  for (const auto& c : cases()) {
    CodeBlocks blocks(c.arrangement, world);
    GuardCellExchange exchange(blocks.list(), blocks.neighbours(world), world, c.width);
    exchange.set_boundary_fill(blocks.wall_fill());
    GuardCellIterator order(exchange, 0, 3);
    blocks.paint();
    order.begin(blocks.list());
    int wrong = 0, seen = 0;
    // Each block is updated in place the moment it is handed out, before the next is asked for.
    while (const auto b = order.next()) {
      wrong += blocks.wrong_guard_cells(0, 3, c.width, *b);
      blocks.overwrite_interior(*b, -1.0);
      ++seen;
    }
    CHECK(wrong == 0);
    CHECK(seen == blocks.list().n_blocks());
    CHECK_FALSE(exchange.in_progress());
  }
}

TEST_CASE("Code's blocks: neighbour lists of a korch::Grid fill it exactly as its decomposition's exchange does") {
  const Communicator world = Communicator::world();
  for (const BoundaryKind edge : {BoundaryKind::periodic, BoundaryKind::outflow})
    for (const int dims : {2, 3}) {
      GridSpec s;
      s.blocks = {3, 2, dims == 3 ? 2 : 1};
      s.block_cells = {4, 3, dims == 3 ? 5 : 1};
      s.guard = 2;
      s.guard_dims = dims;
      s.n_vars = 2;
      Decomposition decomposition(s.blocks, world.size());
      s.owned_blocks = decomposition.blocks_of(world.rank());
      Grid grid(s);
      GuardCellExchange by_grid(grid, decomposition, {edge, edge, edge}, world);
      const auto neighbours = NeighbourList::uniform(grid, dims, s.blocks, {edge, edge, edge},
                                                     [&](int id) { return decomposition.owner(id); });
      GuardCellExchange by_lists(grid, neighbours, world);
      CHECK(by_lists.counts().cells_sent == by_grid.counts().cells_sent);
      CHECK(by_lists.counts().local_copies == by_grid.counts().local_copies);
      auto data = grid.data();
      auto paint = [&] {
        for (std::size_t n = 0; n < data.span(); ++n) data.data()[n] = static_cast<double>(n % 977) * 0.5;
      };
      paint();
      by_grid.fill(0, 2);
      const std::vector<double> expected(data.data(), data.data() + data.span());
      paint();
      by_lists.fill(0, 2);
      CHECK(std::memcmp(expected.data(), data.data(), expected.size() * sizeof(double)) == 0);
    }
}

TEST_CASE("Code's blocks: Neighbour::none leaves its guard cells alone, and an outflow edge needs no corner entry") {
  const Communicator world = Communicator::world();
  Arrangement a;
  a.dims = 2;
  a.sizes = {{{5, 7}, {4, 6}, {1}}};
  a.boundary = {BoundaryKind::outflow, BoundaryKind::outflow, BoundaryKind::periodic};
  a.n_vars = 1;
  CodeBlocks blocks(a, world);
  // Only the faces and the one real corner between blocks 0 and 3, 1 and 2 are named: every other
  // corner lies on an outflow face.
  NeighbourList lists(2);
  const int n_ranks = world.size();
  for (int b = 0; b < blocks.list().n_blocks(); ++b) {
    const auto q = blocks.list().block(b).index;
    for (const auto& d : NeighbourList::directions(2)) {
      const int x = q[0] + d[0], y = q[1] + d[1];
      if (x < 0 || x > 1 || y < 0 || y > 1) {
        if (d[0] == 0 || d[1] == 0) lists.set(b, d, Neighbour::outflow());
        continue;
      }
      lists.set(b, d, Neighbour::block(x + 2 * y, a.owner(x + 2 * y, n_ranks)));
    }
  }
  GuardCellExchange exchange(blocks.list(), lists, world);
  blocks.paint();
  exchange.fill(0, 1);
  CHECK(blocks.wrong_guard_cells(0, 1, {2, 2, 0}) == 0);

  // The high-x face of block 0 left alone: those guard cells keep their NaN.
  if (a.owner(0, n_ranks) == world.rank()) lists.set(0, {1, 0, 0}, Neighbour::none());
  GuardCellExchange partial(blocks.list(), lists, world);
  blocks.paint();
  partial.fill(0, 1);
  if (a.owner(0, n_ranks) == world.rank()) {
    const auto u = blocks.list().block_view(0);
    CHECK(std::isnan(u(0, 7, 3, 0)));
    CHECK(std::isnan(u(0, 8, 5, 0)));
    CHECK_FALSE(std::isnan(u(0, 1, 3, 0)));  // the outflow face still filled
  }
}
