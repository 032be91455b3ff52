// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The direct (coloured Kokkos) executor on ranks: the airfoil's rms on N ranks equals one rank's,
// each rank's plan holds only the elements it executes, a skipped halo refresh shows in the rms, indirect
// increments and reductions count every element once; the message-driven executor on ranks gives
// one rank's rms and bits too, in any delivery order (one process, and 2 and 3 MPI ranks where MPI is built in).
#include <doctest/doctest.h>

#include <korch/communicator.hpp>
#include <korch/mesh.hpp>
#include "airfoil.hpp"

#include <array>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_mesh_ranks_executors {

#ifndef KORCH_MESH_DATA_DIR
#error "KORCH_MESH_DATA_DIR must name apps/mesh/data (set in unit_tests/CMakeLists.txt)"
#endif

using namespace korch;
using namespace korch::mesh;
namespace af = korch::mesh::airfoil;

namespace {

Partition airfoil_partition(af::Problem& p) {
  return Partition(Communicator::world(), p.cells, {p.nodes, p.edges, p.bedges, p.cells},
                   {p.pedge, p.pecell, p.pbedge, p.pbecell, p.pcell});
}

af::Constants stored_constants() {
  return af::read_constants(std::string(KORCH_MESH_DATA_DIR) + "/airfoil-162/constants.txt");
}

bool relative_equal(double got, double expected, double tolerance) {
  return std::fabs(got - expected) <= tolerance * std::fabs(expected);
}

// Runs `iterations` airfoil iterations with the direct executor on one rank and on every rank and
// compares the rms of every step, then the gathered state.
void check_direct_against_one_rank(const af::MeshData& mesh, int iterations, IncMode mode) {
  af::Problem one(mesh, stored_constants()), ranks(mesh, stored_constants());
  DirectExecutor single(DirectOptions{mode});
  const Partition part = airfoil_partition(ranks);
  DirectExecutor exec(part, DirectOptions{mode});
  REQUIRE(exec.sync() != nullptr);
  INFO("ranks ", part.size(), ", partition ", part.method(), ", cells ", mesh.ncell, ", ", exec.name());
  for (int it = 1; it <= iterations; ++it) {
    const std::array<double, 2> expected = one.iterate(single), got = ranks.iterate(exec);
    for (int k = 0; k < 2; ++k) {
      INFO("iteration ", it, " step ", k, ": rms ", got[k], " expected ", expected[k]);
      CHECK(relative_equal(got[k], expected[k], 1e-12));
    }
  }
  for (Dat<double, 4>* d : {&ranks.q, &ranks.qold, &ranks.res}) exec.sync()->gather(d->core());
  exec.sync()->gather(ranks.adt.core());
  // Coloured, a rank runs its share in the whole set's colours: a cell's increments come in one
  // rank's order. Atomics add in whatever order the backend's threads take.
  if (mode == IncMode::Colouring)
    CHECK(ranks.max_difference(one.state()) == 0.0);
  else
    CHECK(ranks.max_difference(one.state()) <= 1e-12);
  if (part.size() > 1) CHECK(exec.sync()->counts().exchanges > 0);
}

// Forwards to an executor, but clears q's dirty flag before every res_calc: the refresh of the
// values res_calc reads across the partition never happens.
class SkipRefreshOfQ final : public Executor {
 public:
  SkipRefreshOfQ(Executor& inner, Dat<double, 4> q) : inner_(inner), q_(std::move(q)) {}
  std::string name() const override { return inner_.name() + " skipping q's refresh"; }
  void run(ParLoopBase& loop) override {
    if (loop.name() == "res_calc") q_.core().set_halo_dirty(false);
    inner_.run(loop);
  }

 private:
  Executor& inner_;
  Dat<double, 4> q_;
};

// The colours of a plan: elements of one colour share no cell they increment through pecell.
void check_colouring(const DirectPlan& plan, const Map& pecell) {
  auto order = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), plan.order);
  const int* cells = pecell.host_data();
  for (int c = 0; c < plan.n_colours(); ++c) {
    std::set<int> seen;
    for (int i = plan.colour_offsets[static_cast<std::size_t>(c)];
         i < plan.colour_offsets[static_cast<std::size_t>(c) + 1]; ++i)
      for (int j = 0; j < 2; ++j) {
        const int cell = cells[2 * static_cast<std::size_t>(order(i)) + static_cast<std::size_t>(j)];
        INFO("colour ", c, " cell ", cell);
        CHECK(seen.insert(cell).second);
      }
  }
}

// A chain of cells 0 .. n-1, edge e joining cells e and e+1.
std::vector<int> chain_links(int n) {
  std::vector<int> v;
  for (int e = 0; e + 1 < n; ++e) v.insert(v.end(), {e, e + 1});
  return v;
}

struct CountEnds {
  KOKKOS_INLINE_FUNCTION void operator()(double* d0, double* d1, int* edges, int* longest) const {
    *d0 += 1;
    *d1 += 1;
    *edges += 1;
    *longest = *longest < 1 ? 1 : *longest;
  }
};
struct MinMaxSum {
  KOKKOS_INLINE_FUNCTION void operator()(const double* a, double* lo, double* hi, double* sum) const {
    *lo = *a < *lo ? *a : *lo;
    *hi = *a > *hi ? *a : *hi;
    *sum += *a;
  }
};

}  // namespace

TEST_CASE("direct executor on ranks: the 162-cell mesh gives one rank's rms for 50 iterations") {
  const auto mesh = af::read_mesh(std::string(KORCH_MESH_DATA_DIR) + "/airfoil-162/mesh.dat");
  check_direct_against_one_rank(mesh, 50, IncMode::Colouring);
  check_direct_against_one_rank(mesh, 4, IncMode::Atomics);
}

TEST_CASE("direct executor on ranks: a generated 37 x 9 O-grid (333 cells) gives one rank's rms") {
  check_direct_against_one_rank(af::generate_ogrid(37, 9), 50, IncMode::Colouring);
}

namespace {

// Per element of the plan: its colour (-1 for elements the plan does not run).
std::vector<int> colour_of_elements(const DirectPlan& plan, int n) {
  auto order = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), plan.order);
  std::vector<int> colour(static_cast<std::size_t>(n), -1);
  for (int c = 0; c < plan.n_colours(); ++c)
    for (int i = plan.colour_offsets[static_cast<std::size_t>(c)];
         i < plan.colour_offsets[static_cast<std::size_t>(c) + 1]; ++i)
      colour[static_cast<std::size_t>(order(i))] = c;
  return colour;
}

}  // namespace

TEST_CASE(
    "direct executor on ranks: each rank runs the edges it executes, and only those, in the whole set's colours") {
  af::Problem p(af::generate_ogrid(37, 9), stored_constants());
  const Partition part = airfoil_partition(p);
  DirectExecutor exec(part);
  p.iterate(exec);
  const DirectPlan& res_calc = exec.plan(p.res_calc());
  const SetPartition& edges = part.of(p.edges);
  // res_calc increments through pecell: owned edges plus the execute halo.
  CHECK(res_calc.order.extent(0) == edges.executed.size());
  CHECK(res_calc.colour_offsets.back() == static_cast<int>(edges.executed.size()));
  check_colouring(res_calc, p.pecell);
  // Every executed edge has the colour the whole set's colouring gives it, so a cell's increments
  // come in the same order on any number of ranks.
  const std::vector<int> share = colour_of_elements(res_calc, p.edges.size()),
                         whole = colour_of_elements(make_direct_plan(p.res_calc(), IncMode::Colouring), p.edges.size());
  for (const int e : edges.executed) {
    INFO("edge ", e);
    CHECK(share[static_cast<std::size_t>(e)] == whole[static_cast<std::size_t>(e)]);
  }
  // update modifies cells directly: owned cells only, in one colour.
  const DirectPlan& update = exec.plan(p.update());
  CHECK(update.colour_offsets.back() == static_cast<int>(part.of(p.cells).owned.size()));
  if (part.size() > 1) CHECK(edges.executed.size() < static_cast<std::size_t>(p.edges.size()));
}

TEST_CASE("direct executor on ranks: without q's halo refresh the rms is wrong, so the refresh is needed") {
  const auto mesh = af::generate_ogrid(37, 9);
  af::Problem one(mesh, stored_constants()), ranks(mesh, stored_constants());
  DirectExecutor single;
  const Partition part = airfoil_partition(ranks);
  DirectExecutor direct(part);
  SkipRefreshOfQ skipping(direct, ranks.q);
  double largest = 0;
  for (int it = 1; it <= 4; ++it) {
    const std::array<double, 2> expected = one.iterate(single), got = ranks.iterate(skipping);
    for (int k = 0; k < 2; ++k) largest = std::max(largest, std::fabs(got[k] - expected[k]) / expected[k]);
  }
  INFO("largest relative rms difference ", largest, " on ", part.size(), " ranks");
  if (part.size() > 1)
    CHECK(largest > 1e-6);
  else
    CHECK(largest <= 1e-12);
}

// The direct executor colouring (0) or with atomics (1), or the message-driven executor (2), on the
// partition's ranks; `sync` is set to its RankSync.
std::unique_ptr<Executor> executor_on_ranks(int kind, const Partition& part, RankSync*& sync) {
  if (kind == 2) {
    auto exec = std::make_unique<MessageExecutor>(part);
    sync = exec->sync();
    return exec;
  }
  auto exec = std::make_unique<DirectExecutor>(part, DirectOptions{kind == 0 ? IncMode::Colouring : IncMode::Atomics});
  sync = exec->sync();
  return exec;
}

TEST_CASE("executors on ranks: increments through the execute halo and reductions count each element once") {
  for (int kind = 0; kind < 3; ++kind) {
    const int n = 41;
    Set cells("cells", n), edges("edges", n - 1);
    Map ecell("ecell", edges, cells, 2, chain_links(n));
    const Partition part(Communicator::world(), cells, {cells, edges}, {ecell});
    RankSync* sync = nullptr;
    const std::unique_ptr<Executor> executor = executor_on_ranks(kind, part, sync);
    Executor& exec = *executor;
    INFO(exec.name(), ", partition ", part.method(), " on ", part.size(), " ranks");
    Dat<double, 1> degree("degree", cells);
    Global<int> count("edges", 0), longest("longest", 0);
    auto count_ends = par_loop("count", CountEnds{}, edges, arg(degree, ecell, 0, Access::Inc),
                               arg(degree, ecell, 1, Access::Inc), arg(count, Access::Inc), arg(longest, Access::Max));
    exec.run(count_ends);
    CHECK(count.value() == n - 1);
    CHECK(longest.value() == 1);
    CHECK(degree.core().halo_dirty() == (part.size() > 1));
    sync->gather(degree.core());
    for (int cell = 0; cell < n; ++cell) CHECK(degree.host_read()[cell] == (cell == 0 || cell == n - 1 ? 1.0 : 2.0));

    std::vector<double> values(n);
    for (int i = 0; i < n; ++i) values[static_cast<std::size_t>(i)] = (i * 7) % 13 - 3.5;
    Dat<double, 1> v("v", cells, values);
    Global<double> lo("lo", 100.0), hi("hi", -100.0), sum("sum", 1.0);
    auto reduce = par_loop("reduce", MinMaxSum{}, cells, arg(v, Access::Read), arg(lo, Access::Min),
                           arg(hi, Access::Max), arg(sum, Access::Inc));
    exec.run(reduce);
    double expected_sum = 1.0;
    for (double x : values) expected_sum += x;
    CHECK(lo.value() == -3.5);
    CHECK(hi.value() == 8.5);
    CHECK(sum.value() == doctest::Approx(expected_sum).epsilon(1e-14));
  }
}

TEST_CASE("message-driven executor on ranks: the airfoil gives one rank's rms, in batches and in random order") {
  for (const auto& mesh :
       {af::read_mesh(std::string(KORCH_MESH_DATA_DIR) + "/airfoil-162/mesh.dat"), af::generate_ogrid(37, 9)}) {
    for (const bool random : {false, true}) {
      af::Problem one(mesh, stored_constants()), ranks(mesh, stored_constants());
      MessageExecutor single;
      const Partition part = airfoil_partition(ranks);
      MessageOptions options;
      if (random) options.random_seed = 7;
      MessageExecutor exec(part, options);
      REQUIRE(exec.sync() != nullptr);
      INFO(exec.name(), " on ", part.size(), " ranks, cells ", mesh.ncell);
      for (int it = 1; it <= 6; ++it) {
        const std::array<double, 2> expected = one.iterate(single), got = ranks.iterate(exec);
        for (int k = 0; k < 2; ++k) {
          INFO("iteration ", it, " step ", k, ": rms ", got[k], " expected ", expected[k]);
          CHECK(relative_equal(got[k], expected[k], 1e-12));
        }
      }
      // The last loop, update, reads and writes cells directly: only this rank's cells took part.
      const InvocationReport& update = exec.last_report();
      int begun = 0;
      for (const int b : update.begin) begun += b;
      CHECK(begun == static_cast<int>(part.of(ranks.cells).owned.size()));
      for (Dat<double, 4>* d : {&ranks.q, &ranks.qold, &ranks.res}) exec.sync()->gather(d->core());
      exec.sync()->gather(ranks.adt.core());
      // Increments wait in their target's inbox and add in writer order, whatever the delivery.
      CHECK(ranks.max_difference(one.state()) == 0.0);
    }
  }
}

}  // namespace test_mesh_ranks_executors
