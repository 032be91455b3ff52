// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestBlocks (docs/adaptive-mesh.md, "A code's own adaptive blocks"), on one process and on 2 and
// 3 MPI ranks: a code's own leaves, in its own layout and order and shared among ranks its own way,
// get in a cycle (ForestFillIterator) the guard cells of korch's own fill across levels, bit for
// bit, also after the code's own regrid and relist(); a list changed without relist(), and lists
// that do not describe a balanced forest, are errors naming what to fix, the same on every rank; a
// rank that does not come to a cycle's copies stops the others with an error naming it.
#include <doctest/doctest.h>

#include <korch/bundle.hpp>
#include <korch/communicator.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>
#include <korch/forest_fill_iterator.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>

#include "test_forest_blocks_support.hpp"
#include "test_forest_support.hpp"

#include <Kokkos_Core.hpp>

#include <atomic>
#include <cstdint>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_forest_blocks {

namespace {

using korch::BlockKey;
using korch::ForestBlocks;
using korch::ForestFillIterator;
using korch::ForestMesh;
using korch::test::CodeLeaves;
using korch::test::device_differences;
using korch::test::device_leaves;
using korch::test::fill_cycle;

// Periodic in x, outflow in y; guard cells half a block wide along y.
const korch::ForestMeshShape shape{
    {2, {3, 2, 1}, {true, false, false}, 2}, {8, 6, 1}, {2, 3, 0}, 2, {0, 0, 0}, {1.5, 1, 1}};

// The reference mesh on this process, refined twice around a bump at (cx, cy), guard cells filled.
void follow_bump(ForestMesh& ref, double cx, double cy) {
  ref.set([&](const std::array<double, 3>& x, int var) {
    return var == 0 ? korch::test::bump(x, cx, cy, 0.01) : 2.0 * x[0] - x[1];
  });
  korch::RegridOptions options;
  options.vars = {0};
  options.refine_above = 0.2;
  options.derefine_below = 0.02;
  for (int i = 0; i < 2; ++i) ref.regrid(options);
  ref.fill_guard_cells();
}

}  // namespace

TEST_CASE("ForestBlocks: a code's own leaves get korch's fill across levels, also after its own regrid") {
  const auto world = korch::Communicator::world();
  ForestMesh ref("reference", shape);
  follow_bump(ref, 0.6, 0.5);
  REQUIRE(ref.forest().leaves_per_level().size() == 3);
  CodeLeaves code(ref, world.rank(), world.size());
  ForestBlocks mesh(code.list, shape.forest, world);
  CHECK(mesh.forest().leaves() == ref.forest().leaves());
  for (int i = 0; i < mesh.forest().n_leaves(); ++i) CHECK(mesh.owner(i) == code.owner_of(i, world.size()));

  for (const auto fill : {ForestFillIterator::Fill::on_hand_out, ForestFillIterator::Fill::by_the_action}) {
    int handed = 0;
    CHECK(fill_cycle(mesh, code, ref, fill, handed) == 0);
    CHECK(handed == code.list.n_blocks());
  }

  // The code regrids its own mesh: the bump moved, the leaves changed, the arrays are new.
  const auto before = ref.forest().leaves();
  follow_bump(ref, 0.3, 0.4);
  REQUIRE(ref.forest().leaves() != before);
  code.relist(ref, world.rank(), world.size());
  int handed = 0;
  CHECK_THROWS_WITH_AS(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::on_hand_out, handed),
                       doctest::Contains("call relist()"), korch::Error);
  mesh.relist();
  CHECK(mesh.forest().leaves() == ref.forest().leaves());
  CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::on_hand_out, handed) == 0);
  CHECK(handed == code.list.n_blocks());
  // The whole fill between cycles gives the same bits.
  for (int b = 0; b < code.list.n_blocks(); ++b)
    for (int v = 0; v < 2; ++v) code.at(b, v, 0, 0, 0) = -7.0;  // a corner guard cell
  mesh.fill_guard_cells();
  int wrong = 0;
  for (int b = 0; b < code.list.n_blocks(); ++b)
    wrong += code.differences(b, ref, mesh.own_leaves()[static_cast<std::size_t>(b)]);
  CHECK(world.sum(wrong) == 0);
}

// Bytes korch's residency moved between the code's device arrays and its host copies so far.
std::uint64_t staged(const CodeLeaves& code) {
  return code.list.n_blocks() == 0 ? 0 : code.list.device_residency()->transfers().total();
}

TEST_CASE("ForestBlocks: a code's leaves in device memory get the same fill, on the device") {
  if (korch::device_is_accelerator) {
    MESSAGE(
        "skipped: the code's leaves here are host vectors listed as device arrays, which needs the device to be the "
        "host");
    return;
  }
  const auto world = korch::Communicator::world();
  ForestMesh ref("reference", shape);
  follow_bump(ref, 0.6, 0.5);
  CodeLeaves code(ref, world.rank(), world.size(), 0, true);
  REQUIRE(code.list.on_device());
  ForestBlocks mesh(code.list, shape.forest, world);
  // A leaf's fill outside a cycle that made the host copies valid is refused, naming the fix.
  if (code.list.n_blocks() > 0)
    CHECK_THROWS_WITH_AS(mesh.fill_guard_cells(0), doctest::Contains("fill inside a cycle over a ForestFillIterator"),
                         korch::Error);
  // The iterator's fills run on the device arrays; the action's (by_the_action) on the host copies,
  // which the cycle's end writes back.
  for (const auto fill : {ForestFillIterator::Fill::on_hand_out, ForestFillIterator::Fill::by_the_action}) {
    for (int b = 0; b < code.list.n_blocks(); ++b) code.at(b, 0, 0, 0, 0) = -7.0;  // a corner guard cell
    int handed = 0;
    CHECK(fill_cycle(mesh, code, ref, fill, handed) == 0);
    CHECK(handed == code.list.n_blocks());
  }
  // Between cycles: the whole fill reads the arrays as the code left them (an interior cell it
  // changed, the same in the reference) and writes the guard cells on the device, staging nothing.
  const int i = ref.shape().guard[0] + 1, j = ref.shape().guard[1] + 1;
  for (int leaf = 0; leaf < ref.forest().n_leaves(); ++leaf) {  // every rank's leaves, as on every rank
    const korch::BlockArray& r = ref.array(leaf);
    r.data[r.stride[0] + i * r.stride[1] + j * r.stride[2]] += 1.0;
  }
  for (int b = 0; b < code.list.n_blocks(); ++b) {
    code.at(b, 1, i, j, 0) += 1.0;
    code.at(b, 1, 0, 0, 0) = -7.0;
  }
  ref.fill_guard_cells();
  const std::uint64_t before = staged(code);
  mesh.fill_guard_cells();
  CHECK(staged(code) == before);
  int wrong = 0;
  for (int b = 0; b < code.list.n_blocks(); ++b)
    wrong += code.differences(b, ref, mesh.own_leaves()[static_cast<std::size_t>(b)]);
  CHECK(world.sum(wrong) == 0);
  // A leaf's fill between cycles runs on the device too, for a range of variables.
  for (int b = 0; b < code.list.n_blocks(); ++b) {
    code.at(b, 1, 0, 0, 0) = -7.0;
    mesh.fill_guard_cells(b, 1, 1);
    CHECK(code.differences(b, ref, mesh.own_leaves()[static_cast<std::size_t>(b)]) == 0);
  }
  if (code.list.n_blocks() > 0)
    CHECK_THROWS_WITH_AS(mesh.fill_guard_cells(0, 1, 2), doctest::Contains("give a range within 0 .. 1"), korch::Error);
}

TEST_CASE("ForestBlocks: leaves in Views of korch's device memory space are filled on the device, as on the host") {
  const auto world = korch::Communicator::world();
  ForestMesh ref("reference", shape);
  follow_bump(ref, 0.6, 0.5);
  korch::BlockList list("device leaves", shape.n_vars);
  const auto views = device_leaves(ref, list, world.rank(), world.size());
  ForestBlocks mesh(list, shape.forest, world);
  mesh.fill_guard_cells();
  CHECK(world.sum(device_differences(ref, mesh, views)) == 0);
  if (list.n_blocks() > 0) CHECK(list.device_residency()->transfers().total() == 0);
}

TEST_CASE("ForestBlocks: with a custom boundary a code's device leaves are filled on the host copies, the same bits") {
  if (korch::device_is_accelerator) {
    MESSAGE("skipped: the code's leaves here are host vectors listed as device arrays");
    return;
  }
  const auto world = korch::Communicator::world();
  ForestMesh ref("reference", shape);
  follow_bump(ref, 0.6, 0.5);
  const auto wall = [](int level, const korch::ForestGuardFill::Cell& cell, int var) {
    return 100.0 * level + static_cast<double>(cell[0] + 3 * cell[1]) + 0.5 * var;
  };
  ref.set_boundary(wall);
  ref.fill_guard_cells();
  CodeLeaves code(ref, world.rank(), world.size(), 0, true);
  ForestBlocks mesh(code.list, shape.forest, world);
  mesh.set_boundary(wall);
  int handed = 0;
  const std::uint64_t before = staged(code);
  CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::on_hand_out, handed) == 0);
  if (code.list.n_blocks() > 0) CHECK(staged(code) > before);  // the host copies were claimed
  // The default boundary again: the fill goes back to the device.
  mesh.set_boundary({});
  ref.set_boundary({});
  ref.fill_guard_cells();
  const std::uint64_t between = staged(code);
  mesh.fill_guard_cells();
  int wrong = 0;
  for (int b = 0; b < code.list.n_blocks(); ++b)
    wrong += code.differences(b, ref, mesh.own_leaves()[static_cast<std::size_t>(b)]);
  CHECK(world.sum(wrong) == 0);
  CHECK(staged(code) == between);
  // A custom boundary again: a leaf's fill between cycles is the host copies' once more, refused
  // while they are stale.
  mesh.set_boundary(wall);
  if (code.list.n_blocks() > 0)
    CHECK_THROWS_WITH_AS(mesh.fill_guard_cells(0), doctest::Contains("fill inside a cycle"), korch::Error);
}

TEST_CASE("ForestBlocks: 3-D leaves of a code on ranks, filled cell for cell as korch's own mesh fills them") {
  const auto world = korch::Communicator::world();
  const korch::ForestMeshShape cube{{3, {2, 2, 2}, {true, true, true}, 1}, {4, 4, 6}, {1, 2, 1}, 1};
  ForestMesh ref("reference", cube);
  ref.set([](const std::array<double, 3>& x, int) { return std::sin(6 * x[0]) + x[1] * x[2]; });
  ref.adapt({{0, {0, 0, 0}}, {0, {1, 1, 0}}}, {});
  ref.fill_guard_cells();
  // Host arrays, and device arrays (filled on the device) where the device is the host.
  for (const bool device : {false, true}) {
    if (device && korch::device_is_accelerator) break;
    CodeLeaves code(ref, world.rank(), world.size(), 0, device);
    ForestBlocks mesh(code.list, cube.forest, world);
    int handed = 0;
    CHECK(fill_cycle(mesh, code, ref, ForestFillIterator::Fill::on_hand_out, handed) == 0);
    CHECK(handed == code.list.n_blocks());
  }
}

TEST_CASE("ForestBlocks: a rank without leaves skips its cycles, the others fill without it") {
  const auto world = korch::Communicator::world();
  ForestMesh ref("reference", shape);
  follow_bump(ref, 0.6, 0.5);
  const int first = world.size() > 1 ? 1 : 0;
  CodeLeaves code(ref, world.rank(), world.size(), first);
  ForestBlocks mesh(code.list, shape.forest, world);
  if (world.rank() < first) {
    CHECK(mesh.own_leaves().empty());
    return;
  }
  std::atomic<int> seen{0};
  korch::Bundle bundle("fill only");
  bundle.add(korch::TypedAction("look").on_box([&](const korch::ActionContext&, const auto&) { ++seen; }));
  korch::Runtime runtime;
  ForestFillIterator leaves(mesh, 0, -1);
  runtime.execute(bundle, korch::configurations::get("cpu_only", {"look"}), code.list, &leaves);
  CHECK(seen.load() == code.list.n_blocks());
  int wrong = 0;
  for (int b = 0; b < code.list.n_blocks(); ++b)
    wrong += code.differences(b, ref, mesh.own_leaves()[static_cast<std::size_t>(b)]);
  CHECK(wrong == 0);
}

// Rank 1 comes to the cycle 5 s late, the others wait at most 1 s for messages: those that wait
// for rank 1's leaves stop with an error naming it; the late messages are drained as the failed
// cycle is dropped, so the next cycle on every rank fills every guard cell right.
TEST_CASE("ForestBlocks: a rank that does not come to the copies in time stops the others' cycle, naming it") {
  const auto world = korch::Communicator::world();
  if (world.size() < 2) return;  // nothing to wait for
  ForestMesh ref("reference", shape);
  follow_bump(ref, 0.6, 0.5);
  CodeLeaves code(ref, world.rank(), world.size());
  ForestBlocks mesh(code.list, shape.forest, world);
  korch::Bundle bundle("fill only");
  bundle.add(korch::TypedAction("look").on_box([](const korch::ActionContext&, const auto&) {}));
  korch::Runtime runtime;
  const auto one_cycle = [&] {
    ForestFillIterator leaves(mesh, 0, -1);
    runtime.execute(bundle, korch::configurations::get("cpu_only", {"look"}), code.list, &leaves);
  };
  REQUIRE(setenv("KORCH_MESSAGE_WAIT_SECONDS", "1", 1) == 0);
  std::string error;
  if (world.rank() == 1) std::this_thread::sleep_for(std::chrono::seconds(5));
  try {
    one_cycle();
  } catch (const korch::Error& e) {
    error = e.what();
  }
  if (world.rank() == 0) {
    CHECK(error.find("still waiting for rank(s) 1") != std::string::npos);
    CHECK(error.find("KORCH_MESSAGE_WAIT_SECONDS") != std::string::npos);
  }
  if (world.rank() == 1) CHECK(error.empty());
  // A malformed limit is an error naming it, on each rank that waits (rank 0 does, as above).
  REQUIRE(setenv("KORCH_MESSAGE_WAIT_SECONDS", "oops", 1) == 0);
  error.clear();
  try {
    one_cycle();
  } catch (const korch::Error& e) {
    error = e.what();
  }
  if (world.rank() == 0) CHECK(error.find("KORCH_MESSAGE_WAIT_SECONDS=oops") != std::string::npos);
  REQUIRE(unsetenv("KORCH_MESSAGE_WAIT_SECONDS") == 0);
  world.barrier();
  for (int b = 0; b < code.list.n_blocks(); ++b)
    for (int v = 0; v < 2; ++v) code.at(b, v, 0, 0, 0) = -7.0;  // a corner guard cell
  one_cycle();
  int wrong = 0;
  for (int b = 0; b < code.list.n_blocks(); ++b)
    wrong += code.differences(b, ref, mesh.own_leaves()[static_cast<std::size_t>(b)]);
  CHECK(world.sum(wrong) == 0);
}

namespace {

// A list of 4 x 4 blocks with one guard cell on rank 0 (empty elsewhere), for the error cases.
struct Keys {
  std::vector<std::vector<double>> data;
  korch::BlockList list{"bad leaves", 1};
  Keys(const std::vector<BlockKey>& keys, int cells_of_last = 4, bool last_is_leaf = true) {
    if (korch::Communicator::world().rank() != 0) return;
    for (std::size_t n = 0; n < keys.size(); ++n) {
      const int c = n + 1 == keys.size() ? cells_of_last : 4;
      data.emplace_back(static_cast<std::size_t>((c + 2) * 6), 0.0);
      korch::BlockShape s;
      s.cells = {c, 4, 1};
      s.guard = {1, 1, 0};
      s.level = keys[n].level;
      s.leaf = n + 1 < keys.size() || last_is_leaf;
      s.index = {static_cast<int>(keys[n].position[0]), static_cast<int>(keys[n].position[1]), 0};
      list.add(s, korch::BlockArray::of(data.back().data(), korch::IndexOrder::var_i_j_k, {1, c + 2, 6, 1},
                                        {(c + 2) * 6, 6, 1, 1}));
    }
  }
};

std::string error_of(const std::vector<BlockKey>& keys, int max_level = 1, int cells_of_last = 4,
                     bool last_is_leaf = true) {
  Keys k(keys, cells_of_last, last_is_leaf);
  try {
    ForestBlocks mesh(k.list, {2, {2, 2, 1}, {}, max_level}, korch::Communicator::world());
  } catch (const korch::Error& e) {
    return e.what();
  }
  return "no error";
}

BlockKey key(int level, std::int64_t x, std::int64_t y) { return {level, {x, y, 0}}; }

}  // namespace

TEST_CASE("ForestBlocks: lists that are no balanced forest are errors naming the block, on every rank") {
  const auto roots = std::vector<BlockKey>{key(0, 0, 0), key(0, 1, 0), key(0, 0, 1), key(0, 1, 1)};
  CHECK(error_of(roots) == "no error");
  CHECK(error_of({key(0, 0, 0), key(0, 1, 0), key(0, 0, 1)}).find("no listed leaf is level 0 (1, 1, 0)") !=
        std::string::npos);
  auto twice = roots;
  twice.push_back(key(0, 1, 0));
  CHECK(error_of(twice).find("level 0 (1, 0, 0) is listed twice") != std::string::npos);
  auto beyond = roots;
  beyond.push_back(key(2, 0, 0));
  CHECK(error_of(beyond).find("level 2 (0, 0, 0) lies outside") != std::string::npos);
  auto nested = roots;
  nested.push_back(key(1, 0, 0));
  CHECK(error_of(nested).find("level 0 (0, 0, 0) contains other listed leaves") != std::string::npos);
  // Root (0, 0) split, its child (1, 1) split again, beside the unsplit root (1, 0): two levels apart.
  std::vector<BlockKey> steep{key(0, 1, 0), key(0, 0, 1), key(0, 1, 1), key(1, 0, 0), key(1, 1, 0), key(1, 0, 1)};
  for (int y = 2; y < 4; ++y)
    for (int x = 2; x < 4; ++x) steep.push_back(key(2, x, y));
  CHECK(error_of(steep, 2).find("not 2:1 balanced") != std::string::npos);
  CHECK(error_of(roots, 1, 6).find("block 3 has 6 x 4 x 1 cells") != std::string::npos);
  CHECK(error_of(roots, 1, 4, false).find("block 3 is not a leaf") != std::string::npos);
  CHECK(error_of({}).find("no rank lists a block") != std::string::npos);
}

TEST_CASE("ForestBlocks: bad blocks and other sources are refused with the fix") {
  const auto world = korch::Communicator::world();
  Kokkos::View<double****, korch::DeviceMemSpace> u("u", 1, 6, 6, 1);
  korch::BlockList device("device leaves", 1);
  korch::BlockShape s;
  s.cells = {4, 4, 1};
  s.guard = {1, 1, 0};
  if (world.rank() == 0) device.add(s, korch::BlockArray::on_device(u, korch::IndexOrder::var_i_j_k));

  Keys one({key(0, 0, 0)});
  ForestBlocks mesh(one.list, {2, {1, 1, 1}, {}, 0}, world);
  CHECK_THROWS_WITH_AS(mesh.fill_guard_cells(5), doctest::Contains("block 5 of"), korch::Error);
  CHECK_THROWS_AS(ForestFillIterator(mesh, 1, 1), korch::Error);  // variable 1 of 0..0
  ForestFillIterator leaves(mesh, 0, 1);
  CHECK_THROWS_WITH_AS(leaves.begin(device), doctest::Contains("pass the mesh's leaves"), korch::Error);
  // A leaf's fill after the code dropped its blocks would read freed arrays: refused.
  if (world.rank() == 0) {
    REQUIRE_NOTHROW(mesh.fill_guard_cells(0));
    one.list.clear();
    CHECK_THROWS_WITH_AS(mesh.fill_guard_cells(0), doctest::Contains("call relist()"), korch::Error);
  }

  // Guard cells wider than half a block reach beyond the leaves whose copies travel: on ranks only.
  std::vector<double> cells(10 * 6, 0.0);
  korch::BlockList wide("wide leaves", 1);
  s.guard = {3, 1, 0};
  if (world.rank() == 0)
    wide.add(s, korch::BlockArray::of(cells.data(), korch::IndexOrder::var_i_j_k, {1, 10, 6, 1}, {60, 6, 1, 1}));
  if (world.size() == 1)
    CHECK_NOTHROW(ForestBlocks(wide, {2, {1, 1, 1}, {}, 0}, world));
  else
    CHECK_THROWS_WITH_AS(ForestBlocks(wide, {2, {1, 1, 1}, {}, 0}, world), doctest::Contains("at most half a block"),
                         korch::Error);
}

}  // namespace test_forest_blocks
