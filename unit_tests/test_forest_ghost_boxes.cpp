// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What travels between ranks for ForestBlocks' fills (docs/adaptive-mesh.md, "On ranks"): only the
// cells the receiving rank's fills read; groups of fine cells it reads only through a coarser cell's
// mean as their sums, beside the cells it reads one by one; whole leaves for a custom boundary. The
// guard cells stay bit for bit those of korch's own fill on one process, on 1 to 4 ranks.
#include <doctest/doctest.h>

#include <korch/bundle.hpp>
#include <korch/communicator.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>
#include <korch/forest_fill_iterator.hpp>
#include <korch/forest_guard_fill.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>

#include "test_forest_blocks_support.hpp"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <optional>
#include <random>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_forest_ghost_boxes {

namespace {

using korch::BlockKey;
using korch::ForestBlocks;
using korch::ForestFillIterator;
using korch::ForestMesh;
using korch::test::CodeLeaves;
using korch::test::fill_cycle;

// One root refined: its lower children on rank 0; its upper children and the root beside it along
// x on rank 1, which reads rank 0's children cell by cell (beside its own children) and through
// means (beside its root); the other roots spread over the ranks.
int split(const BlockKey& leaf, int ranks) {
  if (ranks == 1) return 0;
  if (leaf.level > 0) return leaf.position[1] == 0 ? 0 : 1;
  const int root = static_cast<int>(leaf.position[0] + 2 * leaf.position[1] + 4 * leaf.position[2]);
  return root == 1 ? 1 : root % ranks;
}

// What the fills of the leaves rank `r` holds under `split` read, on `ranks` ranks (any number on
// this process).
std::optional<korch::ForestGuardFill::BoxesRead> reads_of(korch::ForestGuardFill& fill, const ForestMesh& ref, int r,
                                                          int ranks) {
  std::vector<BlockKey> held;
  for (int i = 0; i < ref.forest().n_leaves(); ++i) {
    const BlockKey& leaf = ref.forest().leaves()[static_cast<std::size_t>(i)];
    fill.set_block(leaf, ref.array(i));
    if (split(leaf, ranks) == r) held.push_back(leaf);
  }
  return fill.cells_read(held);
}

}  // namespace

TEST_CASE("ForestBlocks: ranks send each other only the cells their fills read, whole leaves for a custom boundary") {
  const auto world = korch::Communicator::world();
  const korch::ForestMeshShape cube{{3, {2, 2, 2}, {true, false, true}, 1}, {6, 6, 6}, {2, 2, 2}, 2};
  ForestMesh ref("reference", cube);
  ref.set([](const std::array<double, 3>& x, int var) { return std::cos(5 * x[0]) + x[1] * x[2] + var; });
  ref.adapt({{0, {0, 0, 0}}, {0, {1, 1, 1}}}, {});
  ref.fill_guard_cells();
  CodeLeaves code(ref, world.rank(), world.size());
  ForestBlocks mesh(code.list, cube.forest, world);
  const std::size_t boxes = mesh.ghost_values_sent();
  int handed = 0;
  CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::on_hand_out, handed) == 0);
  // A custom boundary's fills may read any cell near a leaf: whole leaves travel.
  const auto wall = [](int, const korch::ForestGuardFill::Cell& cell, int var) { return 0.25 * cell[1] - var; };
  mesh.set_boundary(wall);
  ref.set_boundary(wall);
  ref.fill_guard_cells();
  const std::size_t whole = mesh.ghost_values_sent();
  CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::on_hand_out, handed) == 0);
  const std::size_t leaf = 2 * 10 * 10 * 10;
  CHECK(whole % leaf == 0);
  if (world.size() > 1) {
    CHECK(world.sum(static_cast<std::int64_t>(whole)) > 0);
    // The faces' two layers of 6 x 6 cells, and less at edges and corners, of 10^3 stored cells.
    CHECK(boxes * 4 < whole);  // 3720 of 22000 doubles on 2 ranks
  }
  mesh.set_boundary({});
  CHECK(mesh.ghost_values_sent() == boxes);
}

TEST_CASE("ForestBlocks: a leaf a rank reads only through means travels as one sum per coarse cell, same bits") {
  const auto world = korch::Communicator::world();
  const korch::ForestMeshShape plane{{2, {2, 2, 1}, {true, false, false}, 1}, {8, 6, 1}, {2, 2, 0}, 3};
  const korch::ForestMeshShape cube{{3, {2, 2, 2}, {false, true, true}, 1}, {6, 6, 6}, {2, 1, 2}, 2};
  for (const korch::ForestMeshShape& s : {plane, cube}) {
    CAPTURE(s.forest.dims);
    ForestMesh ref("reference", s);
    ref.set([](const std::array<double, 3>& x, int var) { return std::sin(7 * x[0] + var) * (1 + x[1]) - x[2]; });
    ref.adapt({{0, {0, 0, 0}}}, {});
    ref.fill_guard_cells();
    // The refined root's leaves on rank 0, the roots spread over the other ranks, which then read
    // rank 0's leaves only as the means of their cells.
    const auto fine_first = [](const BlockKey& leaf, int ranks) {
      if (leaf.level > 0 || ranks == 1) return 0;
      return 1 + static_cast<int>(leaf.position[0] + 2 * leaf.position[1] + 4 * leaf.position[2]) % (ranks - 1);
    };
    CodeLeaves code(ref, world.rank(), world.size(), fine_first);
    ForestBlocks mesh(code.list, s.forest, world);
    int handed = 0;
    CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::on_hand_out, handed) == 0);
    CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::by_the_action, handed) == 0);
    // What each rank's fills read of rank 0's leaves: groups of 2^dims cells, sent as their sums.
    korch::ForestGuardFill fill(ref.forest(), s.cells, s.guard, s.n_vars);
    std::vector<std::vector<BlockKey>> held(static_cast<std::size_t>(world.size()));
    for (int i = 0; i < ref.forest().n_leaves(); ++i) {
      const BlockKey& leaf = ref.forest().leaves()[static_cast<std::size_t>(i)];
      fill.set_block(leaf, ref.array(i));
      // On one process: what the roots read, as another rank would.
      if (world.size() > 1 || leaf.level == 0)
        held[static_cast<std::size_t>(fine_first(leaf, world.size()))].push_back(leaf);
    }
    std::int64_t sums = 0, cells = 0;
    for (int r = world.size() > 1 ? 1 : 0; r < world.size(); ++r) {
      const auto reads = fill.cells_read(held[static_cast<std::size_t>(r)]);
      REQUIRE(reads.has_value());
      for (const auto& [leaf, read] : *reads)
        if (leaf.level > 0) {
          CHECK(read.cells.empty());
          CHECK(read.sums.group == 1 << s.forest.dims);
          sums += read.sums.values();
          cells += read.sums.cells();
        }
    }
    CHECK(sums > 0);
    CHECK(sums * (1 << s.forest.dims) == cells);
    if (world.size() > 1 && world.rank() == 0) CHECK(mesh.ghost_values_sent() == std::size_t(sums * s.n_vars));
  }
}

TEST_CASE("ForestBlocks: a finer leaf read cell by cell and through means travels as those cells and sums, same bits") {
  const auto world = korch::Communicator::world();
  // Odd guard widths: the cells read one by one end an odd distance into the finer leaf.
  const korch::ForestMeshShape plane{{2, {2, 2, 1}, {false, true, false}, 1}, {8, 6, 1}, {3, 1, 0}, 2};
  const korch::ForestMeshShape cube{{3, {2, 2, 2}, {true, false, false}, 1}, {6, 6, 6}, {1, 3, 2}, 2};
  for (const korch::ForestMeshShape& s : {plane, cube}) {
    CAPTURE(s.forest.dims);
    ForestMesh ref("reference", s);
    ref.set([](const std::array<double, 3>& x, int var) { return std::cos(6 * x[0] - var) * (2 + x[1]) + x[2]; });
    ref.adapt({{0, {0, 0, 0}}}, {});
    ref.fill_guard_cells();
    CodeLeaves code(ref, world.rank(), world.size(), split);
    ForestBlocks mesh(code.list, s.forest, world);
    int handed = 0;
    CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::on_hand_out, handed) == 0);
    CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::by_the_action, handed) == 0);

    // What each other rank's fills read of rank 0's leaves (on one process: as on two ranks).
    const int ranks = std::max(2, world.size());
    korch::ForestGuardFill fill(ref.forest(), s.cells, s.guard, s.n_vars);
    std::int64_t travels = 0;
    for (int r = 1; r < ranks; ++r) {
      const auto reads = reads_of(fill, ref, r, ranks);
      REQUIRE(reads.has_value());
      for (const auto& [leaf, read] : *reads)
        if (split(leaf, ranks) == 0) travels += read.sums.values() + read.cells.values();
      if (r > 1) continue;
      // The child below rank 1's children and beside its root: its sums and its cells, fewer values
      // than the box of both, each group whole on one side.
      const auto mixed = reads->find(BlockKey{1, {1, 0, 0}});
      REQUIRE(mixed != reads->end());
      const korch::ForestGuardFill::Read& read = mixed->second;
      CHECK(read.sums.group == 1 << s.forest.dims);
      CHECK(read.cells.group == 1);
      CHECK(read.sums.values() > 0);
      CHECK(read.cells.values() > 0);
      CHECK(read.sums.values() + read.cells.values() < read.bounds().values());
      for (int a = 0; a < s.forest.dims; ++a) {
        CHECK((read.sums.lo[a] - s.guard[a]) % 2 == 0);
        CHECK((read.sums.hi[a] - s.guard[a]) % 2 == 0);
        CHECK((read.cells.lo[a] - s.guard[a]) % 2 == 0);
        CHECK((read.cells.hi[a] - s.guard[a]) % 2 == 0);
      }
    }
    if (world.size() > 1 && world.rank() == 0) CHECK(mesh.ghost_values_sent() == std::size_t(travels * s.n_vars));
  }
}

// A coarse cell's fine cells may lie in two leaves then: no group travels as its sum.
TEST_CASE("ForestBlocks: with an odd number of cells per block the copies carry cells only, same bits") {
  const auto world = korch::Communicator::world();
  const korch::ForestMeshShape odd{{2, {2, 2, 1}, {true, false, false}, 1}, {7, 6, 1}, {3, 2, 0}, 2};
  ForestMesh ref("reference", odd);
  ref.set([](const std::array<double, 3>& x, int var) { return std::sin(5 * x[1] + var) - x[0] * x[0]; });
  ref.adapt({{0, {0, 0, 0}}}, {});
  ref.fill_guard_cells();
  CodeLeaves code(ref, world.rank(), world.size(), split);
  ForestBlocks mesh(code.list, odd.forest, world);
  int handed = 0;
  CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::on_hand_out, handed) == 0);
  CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::by_the_action, handed) == 0);
  korch::ForestGuardFill fill(ref.forest(), odd.cells, odd.guard, odd.n_vars);
  const auto reads = reads_of(fill, ref, 1, std::max(2, world.size()));
  REQUIRE(reads.has_value());
  CHECK(reads->count(BlockKey{1, {1, 0, 0}}) == 1);
  for (const auto& [leaf, read] : *reads) CHECK(read.sums.empty());
}

// Copies carry the variables the cycle fills; a fill that would read another variable of a copy
// (as the last copies left it) is refused, and ranks that start copies of different variables stop
// with an error rather than read part of a message.
TEST_CASE("ForestBlocks: the copies carry only the variables the cycle fills, and a fill of others is refused") {
  const auto world = korch::Communicator::world();
  const korch::ForestMeshShape three{{2, {2, 2, 1}, {true, true, false}, 1}, {8, 6, 1}, {2, 3, 0}, 3};
  ForestMesh ref("reference", three);
  ref.set([](const std::array<double, 3>& x, int var) { return std::sin(3 * x[0] + x[1] + var); });
  ref.adapt({{0, {0, 0, 0}}}, {});
  ref.fill_guard_cells();
  CodeLeaves code(ref, world.rank(), world.size(), split);
  ForestBlocks mesh(code.list, three.forest, world);
  const std::size_t every = mesh.ghost_values_sent();
  std::atomic<int> seen{0};
  korch::Bundle bundle("fill variable 1");
  bundle.add(std::move(korch::TypedAction("fill")
                           .on_box([&](const korch::ActionContext&, const auto& box) {
                             mesh.fill_guard_cells(box.block_id(), 1, 1);
                             ++seen;
                           })
                           .reads_guard_cells(1)));
  korch::Runtime runtime;
  ForestFillIterator leaves(mesh, 1, 1, ForestFillIterator::Fill::by_the_action);
  runtime.execute(bundle, korch::configurations::get("cpu_only", {"fill"}), code.list, &leaves);
  CHECK(seen.load() == code.list.n_blocks());
  CHECK(mesh.ghost_values_sent() * 3 == every);
  // Variable 1 of every cell, guard cells too, as the reference fills it.
  int wrong = 0;
  for (int b = 0; b < code.list.n_blocks(); ++b) {
    const korch::BlockArray& r = ref.array(ref.forest().leaf_index(mesh.own_leaves()[static_cast<std::size_t>(b)]));
    for (int j = 0; j < code.n[1]; ++j)
      for (int i = 0; i < code.n[0]; ++i)
        wrong += code.at(b, 1, i, j, 0) != r.data[r.stride[0] + i * r.stride[1] + j * r.stride[2]];
  }
  CHECK(world.sum(wrong) == 0);

  const std::vector<int>& alone = mesh.leaves_without_ghosts();
  for (int b = 0; b < code.list.n_blocks(); ++b) {
    if (std::find(alone.begin(), alone.end(), b) != alone.end()) {
      CHECK_NOTHROW(mesh.fill_guard_cells(b, 0, 3));  // reads no copy
      continue;
    }
    CHECK_NOTHROW(mesh.fill_guard_cells(b, 1, 1));
    CHECK_THROWS_WITH_AS(mesh.fill_guard_cells(b, 0, 2), doctest::Contains("hold variables 1 .. 1 only"), korch::Error);
  }
  CHECK_THROWS_WITH_AS(mesh.start_ghost_copies(ForestBlocks::FillBy::action, 2, 2),
                       doctest::Contains("variables 2 .. 3; give a range within 0 .. 2"), korch::Error);
  CHECK(mesh.ghost_messages_outstanding() == 0);
  if (world.size() < 2) return;
  // Rank 0 copies variable 2, the others variables 0 and 1: the messages do not fit.
  REQUIRE(setenv("KORCH_MESSAGE_WAIT_SECONDS", "5", 1) == 0);
  std::string error;
  try {
    if (world.rank() == 0)
      mesh.start_ghost_copies(ForestBlocks::FillBy::action, 2, 1);
    else
      mesh.start_ghost_copies(ForestBlocks::FillBy::action, 0, 2);
    while (mesh.ghost_messages_outstanding() > 0) mesh.wait_for_ghosts();
    mesh.finish_ghost_copies();
  } catch (const korch::Error& e) {
    error = e.what();
    mesh.abandon_ghost_copies();
  }
  REQUIRE(unsetenv("KORCH_MESSAGE_WAIT_SECONDS") == 0);
  CHECK(world.sum(error.empty() ? 0 : 1) > 0);
  if (!error.empty())
    CHECK_MESSAGE(error.find("every rank takes part in each exchange alike") != std::string::npos, error);
  world.barrier();
  // The next exchange of the same variables everywhere is whole again.
  runtime.execute(bundle, korch::configurations::get("cpu_only", {"fill"}), code.list, &leaves);
  CHECK(mesh.ghost_values_sent() * 3 == every);
}

// Random forests, shapes and owners: whatever mix of cells and sums the boxes take, the guard cells
// are those of the fill on one process. Every rank draws the same cases (one seed).
TEST_CASE("ForestBlocks: random forests, block shapes and owners fill as one process does") {
  const auto world = korch::Communicator::world();
  std::mt19937 random(20261201);
  const auto draw = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(random); };
  int sums_only = 0, mixed = 0;  // leaves another rank reads only through means, or also cell by cell
  for (int trial = 0; trial < 12; ++trial) {
    korch::ForestMeshShape s;
    s.forest.dims = trial % 2 == 0 ? 2 : 3;
    s.forest.max_level = 2;
    s.n_vars = 2;
    for (int a = 0; a < 3; ++a) {
      const bool used = a < s.forest.dims;
      s.forest.roots[a] = used ? draw(1, 2) : 1;
      s.forest.periodic[a] = used && draw(0, 1) == 1;
      s.cells[a] = used ? (s.forest.dims == 2 ? draw(4, 9) : draw(4, 6)) : 1;
      s.guard[a] = used ? draw(1, s.cells[a] / 2) : 0;
    }
    CAPTURE(trial);
    ForestMesh ref("reference", s);
    ref.set([](const std::array<double, 3>& x, int var) { return std::cos(4 * x[0] - 3 * x[1] + var) + x[2] * x[0]; });
    for (int round = 0; round < 2; ++round) {
      std::vector<BlockKey> refine;
      for (const BlockKey& leaf : ref.forest().leaves())
        if (draw(0, 2) == 0) refine.push_back(leaf);
      ref.adapt(refine, {});
    }
    ref.fill_guard_cells();
    const unsigned salt = static_cast<unsigned>(draw(0, 1 << 20));
    const auto owner = [salt](const BlockKey& leaf, int ranks) {
      const std::uint64_t h = korch::BlockKeyHash{}(leaf) ^ salt;
      return static_cast<int>((h * 0x9E3779B97F4A7C15ull >> 33) % static_cast<std::uint64_t>(ranks));
    };
    CodeLeaves code(ref, world.rank(), world.size(), owner);
    ForestBlocks mesh(code.list, s.forest, world);
    int handed = 0;
    CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::on_hand_out, handed) == 0);
    CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::by_the_action, handed) == 0);
    // How the leaves would travel among 3 ranks (on this process): sums only, or sums and cells.
    korch::ForestGuardFill fill(ref.forest(), s.cells, s.guard, s.n_vars);
    std::vector<std::vector<BlockKey>> held(3);
    for (int i = 0; i < ref.forest().n_leaves(); ++i) {
      const BlockKey& leaf = ref.forest().leaves()[static_cast<std::size_t>(i)];
      fill.set_block(leaf, ref.array(i));
      held[static_cast<std::size_t>(owner(leaf, 3))].push_back(leaf);
    }
    for (int r = 0; r < 3; ++r) {
      const auto reads = fill.cells_read(held[static_cast<std::size_t>(r)]);
      REQUIRE(reads.has_value());
      for (const auto& [leaf, read] : *reads)
        if (owner(leaf, 3) != r && !read.sums.empty()) ++(read.cells.empty() ? sums_only : mixed);
    }
  }
  CHECK(sums_only > 0);
  CHECK(mixed > 0);
}

}  // namespace test_forest_ghost_boxes
