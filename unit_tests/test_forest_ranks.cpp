// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestMesh on ranks (one process, and 2 and 3 MPI ranks): regrids that follow an advected bump,
// guard fills and flux corrections across ranks give, on every rank's leaves, the bits of the
// same run on one process; totals agree; the leaves are shared along the Morton curve.
#include <doctest/doctest.h>

#include <korch/bundle.hpp>
#include <korch/communicator.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>
#include <korch/forest_fill_iterator.hpp>
#include <korch/forest_mesh.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>

#include "test_forest_support.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

namespace {

using korch::ForestMesh;
using korch::ForestMeshShape;

// Periodic: the total changes only through the flux corrections' round-off.
const ForestMeshShape shape{{2, {3, 2, 1}, {true, true, false}, 2}, {8, 6, 1}, {1, 1, 0}, 2, {0, 0, 0}, {1.5, 1, 1}};

void start(ForestMesh& mesh) {
  mesh.set(
      [](const std::array<double, 3>& x, int var) { return var == 0 ? korch::test::bump(x, 0.6, 0.5, 0.01) : 0.0; });
}

// Steps of advection with a regrid every third step, through the runtime on this rank's leaves:
// guard cells filled before each cycle, or (`in_cycle`) by the action as ForestFillIterator hands
// out each leaf once the other ranks' leaves it reads have arrived.
// With `cost`, every regrid shares the leaves by cost(leaf) (RegridOptions::costs).
void run(ForestMesh& mesh, int steps, bool in_cycle = false,
         const std::function<double(const korch::BlockKey&)>& cost = nullptr) {
  korch::RegridOptions options;
  options.vars = {0};
  options.refine_above = 0.2;
  options.derefine_below = 0.02;
  const double dt = 0.3 * mesh.cell_size(shape.forest.max_level)[0];
  korch::Bundle bundle("advection");
  bundle.add(std::move(korch::TypedAction("advect")
                           .on_box([&](const korch::ActionContext&, const auto& box) {
                             if (in_cycle) mesh.fill_guard_cells(box.block_id(), 0, 1);
                             korch::test::advect(box.var(0), box.var(1), mesh.blocks().block(box.block_id()), mesh, dt);
                           })
                           .reads_guard_cells(1)));
  korch::Runtime runtime;
  const auto configuration = korch::configurations::get("cpu_only", {"advect"});
  for (int step = 0; step < steps; ++step) {
    if (step % 3 == 0) {
      std::vector<double> costs;
      for (const korch::BlockKey& leaf : mesh.own_leaves()) costs.push_back(cost ? cost(leaf) : 0.0);
      options.costs = cost ? &costs : nullptr;
      mesh.regrid(options);
    }
    if (in_cycle) {
      korch::ForestFillIterator leaves(mesh, 0, 1, korch::ForestFillIterator::Fill::by_the_action);
      runtime.execute(bundle, configuration, mesh.blocks(), &leaves);
    } else {
      mesh.fill_guard_cells();
      runtime.execute(bundle, configuration, mesh.blocks());
    }
    korch::test::take_next(mesh);
    mesh.correct_fluxes(dt);
  }
}

// Cells of `shared`'s leaf b (variables [0, vars), guard cells too) that differ from the same leaf
// of `alone`, the whole mesh on one process.
int differences(const ForestMesh& shared, const ForestMesh& alone, int b, int vars) {
  const int index = shared.forest().leaf_index(shared.own_leaves()[static_cast<std::size_t>(b)]);
  const korch::BlockArray& a = shared.array(b);
  const korch::BlockArray& r = alone.array(index);
  int wrong = 0;
  for (int v = 0; v < vars; ++v)
    for (int j = 0; j < shape.cells[1] + 2 * shape.guard[1]; ++j)
      for (int i = 0; i < shape.cells[0] + 2 * shape.guard[0]; ++i) {
        const std::ptrdiff_t at = i * a.stride[1] + j * a.stride[2];
        wrong += a.data[v * a.stride[0] + at] != r.data[v * r.stride[0] + at];
      }
  return wrong;
}

}  // namespace

TEST_CASE("ForestMesh on ranks: every rank's leaves hold the bits of one process, totals agree") {
  const auto world = korch::Communicator::world();
  ForestMesh shared("advection", shape, world);
  ForestMesh alone("advection", shape);  // the whole problem on this process
  start(shared);
  start(alone);
  const double before = shared.total(0);
  CHECK(before == doctest::Approx(alone.total(0)).epsilon(1e-15));
  run(shared, 9);
  run(alone, 9);

  REQUIRE(shared.forest().leaves() == alone.forest().leaves());
  REQUIRE(alone.forest().leaves_per_level().size() == 3);
  // Contiguous pieces of the Morton curve, sizes within one of each other.
  const int n = shared.forest().n_leaves();
  const auto mine = static_cast<std::int64_t>(shared.own_leaves().size());
  CHECK(world.max(mine) - (-world.max(-mine)) <= 1);
  CHECK(world.sum(mine) == n);
  int compared = 0;
  for (int b = 0; b < static_cast<int>(shared.own_leaves().size()); ++b) {
    const int index = shared.forest().leaf_index(shared.own_leaves()[static_cast<std::size_t>(b)]);
    CHECK(shared.owner(index) == world.rank());
    CAPTURE(index);
    CHECK(differences(shared, alone, b, shape.n_vars) == 0);
    ++compared;
  }
  CHECK(world.sum(compared) > 0);
  const double after = shared.total(0);
  CHECK(after == doctest::Approx(alone.total(0)).epsilon(1e-14));
  CHECK(after == doctest::Approx(before).epsilon(1e-14));  // the flux correction holds across ranks
}

TEST_CASE("ForestFillIterator on ranks: guard cells filled in the cycle give the bits of fills before it") {
  const auto world = korch::Communicator::world();
  ForestMesh shared("advection", shape, world);
  ForestMesh alone("advection", shape);
  start(shared);
  start(alone);
  run(shared, 9, true);
  run(alone, 9);
  REQUIRE(shared.forest().leaves() == alone.forest().leaves());
  int wrong = 0;
  // Variable 0 with its guard cells: the in-cycle fills fill only it.
  for (int b = 0; b < static_cast<int>(shared.own_leaves().size()); ++b) wrong += differences(shared, alone, b, 1);
  CHECK(world.sum(wrong) == 0);
}

TEST_CASE(
    "ForestFillIterator on ranks: each leaf goes out filled as the whole mesh's fill fills it, "
    "while the leaves handed out before it are overwritten") {
  const auto world = korch::Communicator::world();
  ForestMesh shared("advection", shape, world);
  ForestMesh alone("advection", shape);
  start(shared);
  start(alone);
  run(shared, 4);  // levels to fill across
  run(alone, 4);
  REQUIRE(alone.forest().leaves_per_level().size() == 3);
  start(alone);
  alone.fill_guard_cells();
  korch::ForestFillIterator leaves(shared, 0, 2);
  for (int cycle = 0; cycle < 2; ++cycle) {
    start(shared);  // the same state again: the last cycle overwrote it
    leaves.begin(shared.blocks());
    int wrong = 0, seen = 0;
    while (const auto b = leaves.next()) {
      wrong += differences(shared, alone, *b, 2);
      // An update in place: the leaves handed out later must not see it in their guard cells.
      const korch::BlockArray& a = shared.array(*b);
      for (int j = shape.guard[1]; j < shape.guard[1] + shape.cells[1]; ++j)
        for (int i = shape.guard[0]; i < shape.guard[0] + shape.cells[0]; ++i)
          a.data[i * a.stride[1] + j * a.stride[2]] = -1.0;
      ++seen;
    }
    CHECK(world.sum(wrong) == 0);
    CHECK(seen == static_cast<int>(shared.own_leaves().size()));
    CHECK(shared.ghost_messages_outstanding() == 0);
  }
  CHECK_THROWS_AS(leaves.begin(alone.blocks()), korch::Error);             // another mesh's leaves
  CHECK_THROWS_AS(korch::ForestFillIterator(shared, 1, 2), korch::Error);  // variables 1..2 of 0..1
  CHECK_THROWS_AS(shared.wait_for_ghosts(), korch::Error);                 // no copies started
}

TEST_CASE("ForestMesh on ranks: guard cells wider than half a block are refused on several ranks") {
  const auto world = korch::Communicator::world();
  ForestMeshShape wide = shape;
  wide.guard = {5, 1, 0};
  if (world.size() == 1) {
    ForestMesh one("wide", wide, world);
    CHECK(one.own_leaves().size() == 6);
  } else {
    try {
      ForestMesh many("wide", wide, world);
      FAIL("no error for 5 guard cells on blocks of 8");
    } catch (const korch::Error& e) {
      CHECK(std::string(e.what()).find("at most half a block") != std::string::npos);
    }
  }
}

TEST_CASE("ForestMesh on ranks: regrids by measured cost balance the ranks' costs and keep the bits of one process") {
  const auto world = korch::Communicator::world();
  // The finest leaves cost four times what a coarser one costs.
  const auto cost = [](const korch::BlockKey& k) { return k.level == shape.forest.max_level ? 4.0 : 1.0; };
  ForestMesh shared("advection", shape, world);
  ForestMesh alone("advection", shape);
  start(shared);
  start(alone);
  run(shared, 9, false, cost);
  run(alone, 9);
  REQUIRE(shared.forest().leaves() == alone.forest().leaves());
  const int n = shared.forest().n_leaves();
  // Contiguous pieces of the curve whose costs differ by at most one leaf's.
  std::vector<double> load(static_cast<std::size_t>(world.size()), 0.0);
  for (int i = 0; i < n; ++i) {
    if (i > 0) CHECK(shared.owner(i) >= shared.owner(i - 1));
    load[static_cast<std::size_t>(shared.owner(i))] += cost(shared.forest().leaves()[static_cast<std::size_t>(i)]);
  }
  CHECK(*std::max_element(load.begin(), load.end()) - *std::min_element(load.begin(), load.end()) <= 4.0);

  // A regrid that changes no leaf moves leaves when rank 0's are measured ten times as costly.
  korch::RegridOptions keep;
  keep.vars = {0};
  keep.refine_above = 1.0;
  keep.derefine_below = 0.0;
  std::vector<double> measured(shared.own_leaves().size(), world.rank() == 0 ? 10.0 : 1.0);
  keep.costs = &measured;
  std::vector<double> cost_of(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) cost_of[static_cast<std::size_t>(i)] = shared.owner(i) == 0 ? 10.0 : 1.0;
  const korch::RegridCounts counts = shared.regrid(keep);
  CHECK(counts.refined + counts.derefined == 0);
  CHECK((counts.migrated > 0) == (world.size() > 1));
  std::fill(load.begin(), load.end(), 0.0);
  double total = 0;
  for (int i = 0; i < n; ++i) {
    load[static_cast<std::size_t>(shared.owner(i))] += cost_of[static_cast<std::size_t>(i)];
    total += cost_of[static_cast<std::size_t>(i)];
  }
  CHECK(*std::max_element(load.begin(), load.end()) <= 1.1 * total / world.size() + 10.0);
  alone.fill_guard_cells();
  int wrong = 0;
  for (int b = 0; b < static_cast<int>(shared.own_leaves().size()); ++b)
    wrong += differences(shared, alone, b, shape.n_vars);
  CHECK(world.sum(wrong) == 0);

  // The curve's first leaf measured as costing more than all others together: each rank still
  // gets leaves (a rank without any could not run its cycles).
  measured.assign(shared.own_leaves().size(), 1.0);
  if (!measured.empty() && shared.owner(0) == world.rank()) measured[0] = 1000.0;
  shared.regrid(keep);
  std::vector<int> leaves_of(static_cast<std::size_t>(world.size()), 0);
  for (int i = 0; i < n; ++i) ++leaves_of[static_cast<std::size_t>(shared.owner(i))];
  CHECK(*std::min_element(leaves_of.begin(), leaves_of.end()) >= 1);
  CHECK(shared.owner(0) == 0);

  // Costs that do not fit are errors naming them, before anything changes.
  measured.assign(shared.own_leaves().size(), 1.0);
  measured.push_back(1.0);
  CHECK_THROWS_WITH_AS(shared.regrid(keep), doctest::Contains("costs for this rank's"), korch::Error);
  measured.assign(shared.own_leaves().size(), -1.0);
  CHECK_THROWS_AS(shared.regrid(keep), korch::Error);
  // Bad costs on one rank stop every rank's regrid; none waits for the others.
  measured.assign(shared.own_leaves().size(), 1.0);
  if (world.rank() == world.size() - 1) measured.push_back(1.0);
  const auto expected = world.rank() == world.size() - 1 ? "costs for this rank's" : "another rank's regrid costs";
  CHECK_THROWS_WITH_AS(shared.regrid(keep), doctest::Contains(expected), korch::Error);
}
