// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Neighbour lists that cannot fill a code's guard cells: every mistake is a korch::Error naming the
// block, the direction and the sizes, the same on every rank (each rank checks every rank's lists),
// so no rank is left waiting. Runs as one process and under mpirun.
#include "test_block_exchange_support.hpp"

#include <korch/error.hpp>
#include <korch/guard_cell_exchange.hpp>
#include <korch/guard_cell_iterator.hpp>

#include <doctest/doctest.h>

using namespace korch;
using korch::test::Arrangement;
using korch::test::CodeBlocks;

namespace {

Arrangement ring(std::vector<int> widths) {
  Arrangement a;
  a.dims = 2;
  a.sizes = {{std::move(widths), {6}, {1}}};
  a.boundary = {BoundaryKind::periodic, BoundaryKind::periodic, BoundaryKind::periodic};
  a.n_vars = 1;
  return a;
}

// This rank's blocks of one column of width `w` per rank, on their own; the lists are made by hand.
struct Alone {
  explicit Alone(const Communicator& world) : world(world), list("alone", 1) {}
  int add(int cells_x, int cells_y, int global) {
    storage.emplace_back(static_cast<std::size_t>((cells_x + 4) * (cells_y + 4)), 0.0);
    BlockShape s;
    s.cells = {cells_x, cells_y, 1};
    s.guard = {2, 2, 0};
    s.global_id = global;
    const std::ptrdiff_t ex = cells_x + 4, ey = cells_y + 4;
    return list.add(s,
                    BlockArray::of(storage.back().data(), IndexOrder::var_i_j_k, {1, ex, ey, 1}, {ex * ey, ey, 1, 1}));
  }
  // Block `b` sees `other` (global id, this rank) on every side.
  void surround(NeighbourList& lists, int b, int other) {
    for (const auto& d : NeighbourList::directions(2)) lists.set(b, d, Neighbour::block(other, world.rank()));
  }
  const Communicator& world;
  BlockList list;
  std::vector<std::vector<double>> storage;
};

std::string error_of_exchange(const DataSource& source, const NeighbourList& lists, const Communicator& world,
                              std::array<int, 3> width = {-1, -1, -1}) {
  try {
    GuardCellExchange exchange(source, lists, world, width);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("Code's blocks: a neighbour narrower than the guard width is an error naming both blocks and the widths") {
  const Communicator world = Communicator::world();
  CodeBlocks blocks(ring({8, 1, 8, 8}), world);
  const std::string e = error_of_exchange(blocks.list(), blocks.neighbours(world), world);
  CHECK_MESSAGE(e.find("fills 2 guard cells in x from block 1") != std::string::npos, e);
  CHECK_MESSAGE(e.find("only 1 interior cells") != std::string::npos, e);
  CHECK(e.find("direction (") != std::string::npos);
}

TEST_CASE("Code's blocks: neighbours across a face of different sizes are an error") {
  const Communicator world = Communicator::world();
  Alone alone(world);
  const int base = 10 * world.rank();
  alone.add(8, 6, base);
  alone.add(8, 10, base + 1);
  NeighbourList lists(2);
  alone.surround(lists, 0, base + 1);
  alone.surround(lists, 1, base);
  const std::string e = error_of_exchange(alone.list, lists, world);
  CHECK_MESSAGE(
      e.find("has 6 cells in y but its neighbour block 1 (rank 0) in direction (-1, 0, 0) has 10") != std::string::npos,
      e);
  CHECK(e.find("differ in size only across the face they share") != std::string::npos);
}

TEST_CASE("Code's blocks: an unknown neighbour id, a wrong rank and a missing direction are errors") {
  const Communicator world = Communicator::world();
  Alone alone(world);
  const int base = 10 * world.rank();
  alone.add(8, 6, base);
  NeighbourList lists(2);
  alone.surround(lists, 0, base);
  lists.set(0, {-1, -1, 0}, Neighbour::block(999, world.rank()));
  std::string e = error_of_exchange(alone.list, lists, world);
  CHECK_MESSAGE(e.find("names block 999 in direction (-1, -1, 0), but no rank has a block of that global id") !=
                    std::string::npos,
                e);
  alone.surround(lists, 0, base);
  lists.set(0, {-1, 0, 0}, Neighbour::block(base, world.rank() + 1));
  lists.set(0, {1, 0, 0}, Neighbour::block(base, world.rank() + 1));
  e = error_of_exchange(alone.list, lists, world);
  CHECK_MESSAGE(e.find("names block 0 on rank 1 in direction (-1, 0, 0), but rank 0 owns it") != std::string::npos, e);
  NeighbourList partial(2);
  for (const auto& d : NeighbourList::directions(2))
    if (d[0] == 0 || d[1] == 0) partial.set(0, d, Neighbour::block(base, world.rank()));
  e = error_of_exchange(alone.list, partial, world);
  CHECK_MESSAGE(e.find("has no neighbour in direction (-1, -1, 0)") != std::string::npos, e);
  CHECK(e.find("Neighbour::outflow()") != std::string::npos);
}

TEST_CASE("Code's blocks: lists that disagree across blocks or ranks are an error") {
  const Communicator world = Communicator::world();
  CodeBlocks blocks(ring({8, 8, 8, 8, 8, 8}), world);
  NeighbourList lists = blocks.neighbours(world);
  // Global block 3 says its low-x side is the domain's edge; block 2 says block 3 is there.
  for (int b = 0; b < blocks.list().n_blocks(); ++b)
    if (blocks.list().block(b).global_id == 3) lists.set(b, {-1, 0, 0}, Neighbour::outflow());
  const std::string e = error_of_exchange(blocks.list(), lists, world);
  CHECK_MESSAGE(e.find("the neighbour lists disagree") != std::string::npos, e);
  CHECK_MESSAGE(e.find("global id 2") != std::string::npos, e);
  CHECK_MESSAGE(e.find("names block 3") != std::string::npos, e);
  CHECK_MESSAGE(e.find("the outflow boundary in direction (-1, 0, 0)") != std::string::npos, e);
}

TEST_CASE("Code's blocks: widths beyond the guard cells, a list of the wrong dimension, shared global ids") {
  const Communicator world = Communicator::world();
  CodeBlocks blocks(ring({8, 8, 8}), world);
  const auto lists = blocks.neighbours(world);
  std::string e = error_of_exchange(blocks.list(), lists, world, {3, 2, 0});
  CHECK_MESSAGE(e.find("has 2 guard cells in x but the fill asks for 3") != std::string::npos, e);
  e = error_of_exchange(blocks.list(), NeighbourList(1), world);
  CHECK_MESSAGE(e.find("has 2 guard cells in y but the neighbour list is 1-D") != std::string::npos, e);
  NeighbourList too_many(2);
  too_many.set(blocks.list().n_blocks(), {1, 0, 0}, Neighbour::outflow());
  e = error_of_exchange(blocks.list(), too_many, world);
  CHECK_MESSAGE(e.find("the neighbour list describes block") != std::string::npos, e);

  Alone twins(world);
  twins.add(8, 6, 5);
  twins.add(8, 6, 5);
  NeighbourList two(2);
  twins.surround(two, 0, 5);
  twins.surround(two, 1, 5);
  e = error_of_exchange(twins.list, two, world);
  CHECK_MESSAGE(e.find("global id 5 belongs to block 0 on rank 0 and block 1 on rank 0") != std::string::npos, e);
}

TEST_CASE("NeighbourList: directions outside the list, the block itself and negative ids are errors") {
  NeighbourList lists(2);
  CHECK_THROWS_WITH_AS(lists.set(0, {0, 0, 1}, Neighbour::outflow()), doctest::Contains("2-D list"), Error);
  CHECK_THROWS_WITH_AS(lists.set(0, {0, 0, 0}, Neighbour::outflow()), doctest::Contains("the block itself"), Error);
  CHECK_THROWS_WITH_AS(lists.set(0, {2, 0, 0}, Neighbour::outflow()), doctest::Contains("component 2"), Error);
  CHECK_THROWS_WITH_AS(lists.set(0, {1, 0, 0}, Neighbour::block(-3)), doctest::Contains("neighbour id -3"), Error);
  CHECK_THROWS_WITH_AS(NeighbourList(4), doctest::Contains("4 dimensions"), Error);
  CHECK(lists.get(7, {1, 1, 0}).kind == Neighbour::Kind::unset);
  CHECK(NeighbourList::directions(3).size() == 26);
}

TEST_CASE("Code's blocks: an exchange refuses blocks that changed and an iterator run on another source") {
  const Communicator world = Communicator::world();
  CodeBlocks blocks(ring({8, 8, 8}), world);
  GuardCellExchange exchange(blocks.list(), blocks.neighbours(world), world);
  CodeBlocks other(ring({8, 8, 8}), world);
  GuardCellIterator order(exchange, 0, 1);
  CHECK_THROWS_WITH_AS(order.begin(other.list()), doctest::Contains("pass the exchange's own source"), Error);
  CHECK_FALSE(exchange.in_progress());
  std::vector<double> spare(16 * 16, 0.0);
  BlockShape s;
  s.cells = {4, 4, 1};
  s.global_id = 100;
  blocks.list().add(s, BlockArray::of(spare.data(), IndexOrder::var_i_j_k, {1, 4, 4, 1}, {256, 16, 1, 1}));
  CHECK_THROWS_WITH_AS(exchange.start(0, 1), doctest::Contains("changed since the exchange was made"), Error);
}

TEST_CASE("Code's blocks: guard cells marked for the code's own boundary fill need one") {
  const Communicator world = Communicator::world();
  Arrangement a = ring({8, 8, 8});
  a.sizes[1] = {6, 6};
  a.boundary[1] = BoundaryKind::outflow;
  a.walls_y = true;
  CodeBlocks blocks(a, world);
  GuardCellExchange exchange(blocks.list(), blocks.neighbours(world), world);
  if (blocks.list().n_blocks() > 0)
    CHECK_THROWS_WITH_AS(exchange.start(0, 1), doctest::Contains("no boundary fill is set: call set_boundary_fill"),
                         Error);
  CHECK_FALSE(exchange.in_progress());
}
