// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestMesh: Löhner's estimate on known data; regrids that follow a moving bump keep every
// variable's total to round-off and the forest balanced; and korch's runtime runs an action on the
// leaves of a mesh that changes between cycles, bitwise equal to the code's own loop over them.
#include <doctest/doctest.h>

#include <korch/bundle.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>

#include "test_error_support.hpp"
#include <korch/forest_mesh.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>

#include "test_forest_support.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace {

using korch::test::error_of;

using korch::ForestMesh;
using korch::ForestMeshShape;
using korch::test::advect;
using korch::test::bump;

// One explicit diffusion step from variable 0 into variable 1 on [lo, hi) of a block's storage.
template <class Space, class In, class Out>
void diffuse(const Space& space, In u, Out v, const int lo[3], const int hi[3]) {
  const int k = lo[2];
  Kokkos::parallel_for(
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {lo[0], lo[1]}, {hi[0], hi[1]}),
      KOKKOS_LAMBDA(int i, int j) {
        v(i, j, k) =
            u(i, j, k) + 0.1 * (u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + u(i, j + 1, k) - 4.0 * u(i, j, k));
      });
  space.fence();
}

// The code's own loop: the same step on every leaf, into `out` (one vector per block).
std::vector<std::vector<double>> diffuse_by_hand(const ForestMesh& mesh) {
  const auto& s = mesh.shape();
  std::vector<std::vector<double>> out;
  for (int b = 0; b < static_cast<int>(mesh.forest().leaves().size()); ++b) {
    const korch::BlockArray& a = mesh.array(b);
    const auto u = [&](int i, int j) { return a.data[i * a.stride[1] + j * a.stride[2]]; };
    std::vector<double> block;
    for (int j = s.guard[1]; j < s.guard[1] + s.cells[1]; ++j)
      for (int i = s.guard[0]; i < s.guard[0] + s.cells[0]; ++i)
        block.push_back(u(i, j) + 0.1 * (u(i - 1, j) + u(i + 1, j) + u(i, j - 1) + u(i, j + 1) - 4.0 * u(i, j)));
    out.push_back(block);
  }
  return out;
}

}  // namespace

TEST_CASE("lohner_estimate: 0 on linear data, near 1 at a kink, and it needs a filled guard cell") {
  std::vector<double> data(6 * 6, 0.0);
  const auto a = korch::BlockArray::of(data.data(), korch::IndexOrder::i_j_k_var, {6, 6, 1, 1}, {1, 6, 36, 36});
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 6; ++i) data[static_cast<std::size_t>(i + 6 * j)] = 3.0 + 0.5 * i - 0.25 * j;
  CHECK(korch::lohner_estimate(a, 2, {4, 4, 1}, {1, 1, 0}, 0) == doctest::Approx(0.0));
  for (int j = 0; j < 6; ++j)
    for (int i = 0; i < 6; ++i) data[static_cast<std::size_t>(i + 6 * j)] = std::abs(i - 2.0);  // kink at i = 2
  CHECK(korch::lohner_estimate(a, 2, {4, 4, 1}, {1, 1, 0}, 0, {0.0}) == doctest::Approx(1.0));
  CHECK(error_of([&] {
          korch::lohner_estimate(a, 2, {6, 6, 1}, {0, 0, 0}, 0);
        }).find("one guard cell") != std::string::npos);
  CHECK(error_of([&] { korch::lohner_estimate(a, 2, {4, 4, 1}, {1, 1, 0}, 1); }).find("var = 1") != std::string::npos);
}

TEST_CASE("ForestMesh: regrids follow a moving bump, stay balanced and keep every total to round-off") {
  ForestMesh mesh("bump", ForestMeshShape{{2, {4, 4, 1}, {true, true, false}, 3}, {8, 8, 1}, {2, 2, 0}, 2});
  const auto at = [](double cx) {
    return [cx](const std::array<double, 3>& x, int var) { return var == 0 ? bump(x, cx, 0.5) : 2.0 - x[1]; };
  };
  mesh.set(at(0.3));
  korch::RegridOptions options;
  options.vars = {0};
  options.refine_above = 0.3;
  options.derefine_below = 0.05;
  for (int round = 0; round < 3; ++round) {
    const double before0 = mesh.total(0), before1 = mesh.total(1);
    mesh.regrid(options);
    mesh.forest().check();
    CHECK(mesh.total(0) == doctest::Approx(before0).epsilon(1e-13));
    CHECK(mesh.total(1) == doctest::Approx(before1).epsilon(1e-13));
    mesh.set(at(0.3));  // the refined leaves see the bump at their own resolution
  }
  const auto levels = mesh.forest().leaves_per_level();
  REQUIRE(levels.size() == 4);
  CHECK(levels[0] > 0);
  // The finest leaves sit around the bump.
  for (int b = 0; b < mesh.forest().n_leaves(); ++b) {
    const auto& meta = mesh.blocks().block(b);
    if (meta.level == 3) CHECK(std::abs(meta.lo_coord[0] - 0.3) < 0.2);
  }
  // The bump moves away: its old place coarsens over a few regrids, totals kept.
  mesh.set(at(0.8));
  for (int round = 0; round < 4; ++round) {
    const double before = mesh.total(0);
    mesh.regrid(options);
    mesh.forest().check();
    CHECK(mesh.total(0) == doctest::Approx(before).epsilon(1e-13));
    mesh.set(at(0.8));
  }
  for (int b = 0; b < mesh.forest().n_leaves(); ++b) {
    const auto& meta = mesh.blocks().block(b);
    if (meta.level == 3) CHECK(std::abs(meta.lo_coord[0] - 0.8) < 0.2);
  }
  // A budget of leaves holds.
  korch::RegridOptions tight = options;
  tight.max_leaves = mesh.forest().n_leaves();
  mesh.set(at(0.3));
  mesh.regrid(tight);
  CHECK(mesh.forest().n_leaves() <= tight.max_leaves + 3 * 8);  // balance may split a few beyond it
}

TEST_CASE("ForestMesh: the runtime runs on the leaves of a mesh that changes between cycles") {
  ForestMesh mesh("diffusion", ForestMeshShape{{2, {3, 2, 1}, {true, false, false}, 2}, {6, 10, 1}, {1, 1, 0}, 2});
  mesh.set([](const std::array<double, 3>& x, int) { return bump(x, 1.4, 0.9, 0.05); });
  korch::Bundle bundle("diffusion");
  bundle.add(std::move(korch::TypedAction("diffuse")
                           .on_box([](const korch::ActionContext&, const auto& box) {
                             diffuse(box.space(), box.var(0), box.var(1), box.lo(), box.hi());
                           })
                           .reads_guard_cells(1)));
  korch::Runtime runtime;
  const auto configuration = korch::configurations::get("cpu_only", {"diffuse"});
  korch::RegridOptions options;
  options.refine_above = 0.25;
  options.derefine_below = 0.05;
  int regrids_changing = 0;
  for (int cycle = 0; cycle < 6; ++cycle) {
    if (cycle % 2 == 0) {
      const auto counts = mesh.regrid(options);
      regrids_changing += counts.refined + counts.derefined > 0 ? 1 : 0;
    }
    mesh.fill_guard_cells();
    const auto expected = diffuse_by_hand(mesh);
    runtime.execute(bundle, configuration, mesh.blocks());
    const auto& s = mesh.shape();
    for (int b = 0; b < mesh.forest().n_leaves(); ++b) {
      const korch::BlockArray& a = mesh.array(b);
      std::size_t n = 0;
      for (int j = s.guard[1]; j < s.guard[1] + s.cells[1]; ++j)
        for (int i = s.guard[0]; i < s.guard[0] + s.cells[0]; ++i) {
          double& u = a.data[i * a.stride[1] + j * a.stride[2]];
          const double v = a.data[a.stride[0] + i * a.stride[1] + j * a.stride[2]];
          REQUIRE(v == expected[static_cast<std::size_t>(b)][n++]);
          u = v;  // the next cycle starts from this one's result
        }
    }
  }
  CHECK(regrids_changing >= 1);
  CHECK(mesh.forest().leaves_per_level().size() > 1);
}

namespace {

// Steps of advection through the runtime on a mesh of three levels; the total of variable 0 after
// them, relative to before.
double advected_total_change(bool correct) {
  ForestMesh mesh("advection", ForestMeshShape{{2, {2, 2, 1}, {true, true, false}, 2}, {8, 6, 1}, {1, 1, 0}, 2});
  mesh.set([](const std::array<double, 3>& x, int var) { return var == 0 ? bump(x, 0.45, 0.5, 0.01) : 0.0; });
  korch::RegridOptions options;
  options.vars = {0};
  options.refine_above = 0.2;
  options.derefine_below = 0.02;
  mesh.regrid(options);
  mesh.regrid(options);
  REQUIRE(mesh.forest().leaves_per_level().size() == 3);
  const double dt = 0.3 * mesh.cell_size(2)[0];
  korch::Bundle bundle("advection");
  bundle.add(std::move(korch::TypedAction("advect")
                           .on_box([&](const korch::ActionContext&, const auto& box) {
                             advect(box.var(0), box.var(1), mesh.blocks().block(box.block_id()), mesh, dt);
                           })
                           .reads_guard_cells(1)));
  korch::Runtime runtime;
  const auto configuration = korch::configurations::get("cpu_only", {"advect"});
  const double before = mesh.total(0);
  for (int step = 0; step < 12; ++step) {
    mesh.fill_guard_cells();
    runtime.execute(bundle, configuration, mesh.blocks());
    korch::test::take_next(mesh);
    if (correct) mesh.correct_fluxes(dt);
  }
  return std::abs(mesh.total(0) - before) / before;
}

}  // namespace

TEST_CASE("ForestMesh: flux correction at faces between levels keeps the total of an advected bump") {
  const double corrected = advected_total_change(true);
  const double uncorrected = advected_total_change(false);
  CHECK(corrected < 1e-14);
  CHECK(uncorrected > 1e3 * std::max(corrected, 1e-16));
}

TEST_CASE("ForestMesh: a bad domain, variable or cutoffs are korch::Errors naming them") {
  ForestMeshShape flat{{2, {2, 2, 1}, {false, false, false}, 1}, {4, 4, 1}, {1, 1, 0}, 1};
  flat.domain_hi = {1, 0, 1};
  CHECK(error_of([&] { ForestMesh("flat", flat); }).find("domain_hi[1] = 0") != std::string::npos);
  ForestMesh mesh("m", {{2, {2, 2, 1}, {false, false, false}, 1}, {4, 4, 1}, {1, 1, 0}, 1});
  korch::RegridOptions bad;
  bad.vars = {3};
  CHECK(error_of([&] { mesh.regrid(bad); }).find("variable 3") != std::string::npos);
  korch::RegridOptions crossed;
  crossed.refine_above = 0.1;
  crossed.derefine_below = 0.5;
  CHECK(error_of([&] { mesh.regrid(crossed); }).find("derefine_below = 0.5") != std::string::npos);
  CHECK(error_of([&] { mesh.array(4); }).find("block 4 of 4 leaves") != std::string::npos);
  CHECK(error_of([&] { mesh.regrid_estimate(-1, {}); }).find("block -1 of 4 leaves") != std::string::npos);
  const std::vector<double> few(3, 0.0);
  korch::RegridOptions counted;
  counted.estimates = &few;
  CHECK(error_of([&] { mesh.regrid(counted); }).find("3 estimates for this rank's 4 leaves") != std::string::npos);
}

TEST_CASE("ForestMesh: estimates the code worked out per block regrid as the mesh's own do") {
  const ForestMeshShape shape{{2, {3, 3, 1}, {true, true, false}, 2}, {8, 8, 1}, {2, 2, 0}, 1};
  ForestMesh own("own", shape), given("given", shape);
  int stopped = 0;  // leaves whose estimate regrid_estimate stopped early
  for (ForestMesh* mesh : {&own, &given})
    mesh->set([](const std::array<double, 3>& x, int) { return bump(x, 0.4, 0.6); });
  for (int round = 0; round < 3; ++round) {
    own.regrid({});
    given.fill_guard_cells();
    std::vector<double> estimates;
    korch::RegridOptions options, budget;
    budget.max_leaves = 1000;
    for (int b = 0; b < static_cast<int>(given.own_leaves().size()); ++b) {
      const double exact = given.estimate(b, {}, korch::LohnerOptions{});
      estimates.push_back(exact);
      // What regrid needs: the estimate up to the leaf's deciding cutoff, a value past it beyond.
      const bool finest = given.own_leaves()[static_cast<std::size_t>(b)].level == shape.forest.max_level;
      const double cutoff = finest ? options.derefine_below : options.refine_above;
      const double needed = given.regrid_estimate(b, options);
      CAPTURE(b);
      CHECK(needed <= exact);
      CHECK((exact > cutoff ? needed > cutoff : needed == exact));
      stopped += needed < exact;
      CHECK(given.regrid_estimate(b, budget) == exact);  // a budget ranks by the estimates
    }
    options.estimates = &estimates;
    given.regrid(options);
    CHECK(given.forest().leaves() == own.forest().leaves());
    CHECK(given.total(0) == own.total(0));
  }
  CHECK(stopped > 0);
}
