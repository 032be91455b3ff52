// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Conduction on an adaptive mesh (forest_conduction.hpp): on one level it is the uniform grid's
// step; across levels the system is symmetric with rows summing to zero, keeps the total heat to
// round-off and makes no new extremum, and a spreading Gaussian follows the analytic solution;
// korch-hydro --conduction with levels runs it after each step, the same on every configuration.
#include "amr_simulation.hpp"
#include "conduction.hpp"
#include "forest_conduction.hpp"
#include "options.hpp"
#include "test_error_support.hpp"

#include <korch/block_forest.hpp>
#include <korch/backend/spaces.hpp>
#include <korch/config.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace test_hydro_amr_conduction {

using namespace korch::hydro;
using korch::BlockForest;
using korch::BlockKey;
using korch::ForestShape;
using korch::test::contains;

// The global index (x fastest, on the lattice of `level`) of every row of a forest's system, for
// leaves that all lie on `level`.
std::vector<std::int64_t> uniform_index(const BlockForest& forest, const std::array<int, 3>& cells, int level) {
  std::array<std::int64_t, 3> n{};
  for (std::size_t a = 0; a < 3; ++a)
    n[a] = (static_cast<std::int64_t>(forest.shape().roots[a])
            << (a < static_cast<std::size_t>(forest.shape().dims) ? level : 0)) *
           cells[a];
  std::vector<std::int64_t> index;
  for (const BlockKey& leaf : forest.leaves())
    for (int k = 0; k < cells[2]; ++k)
      for (int j = 0; j < cells[1]; ++j)
        for (int i = 0; i < cells[0]; ++i) {
          const std::int64_t g0 = leaf.position[0] * cells[0] + i, g1 = leaf.position[1] * cells[1] + j,
                             g2 = leaf.position[2] * cells[2] + k;
          index.push_back(g0 + n[0] * (g1 + n[1] * g2));
        }
  return index;
}

// A forest refined at random to `levels` above the roots (2:1 balanced by the forest).
BlockForest random_forest(int dims, bool periodic, int levels, unsigned seed) {
  ForestShape shape;
  shape.dims = dims;
  shape.roots = {2, dims > 1 ? 3 : 1, dims > 2 ? 2 : 1};
  shape.periodic = {periodic, periodic && dims > 1, periodic && dims > 2};
  shape.max_level = levels;
  BlockForest forest(shape);
  std::mt19937 rng(seed);
  for (int pass = 0; pass < levels; ++pass) {
    std::vector<BlockKey> flagged;
    for (const BlockKey& leaf : forest.leaves())
      if (rng() % 3 == 0) flagged.push_back(leaf);
    forest.refine(flagged);
  }
  return forest;
}

std::vector<double> random_field(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> t(n);
  for (double& v : t) v = u(rng);
  return t;
}

double weighted_total(const ConductionSystem& system, const std::vector<double>& t) {
  double sum = 0;
  for (std::size_t r = 0; r < t.size(); ++r) sum += system.weights()[r] * t[r];
  return sum;
}

TEST_CASE("forest conduction: the system is symmetric, its rows sum to zero and its weights fill the domain") {
  for (int dims : {1, 2, 3})
    for (bool periodic : {false, true}) {
      const BlockForest forest = random_forest(dims, periodic, 3, 7u + static_cast<unsigned>(dims));
      const std::array<int, 3> cells{4, dims > 1 ? 2 : 1, dims > 2 ? 4 : 1};
      const std::array<double, 3> root{0.5, 0.25, 0.3};
      const ConductionSystem system = forest_conduction_system(forest, cells, root);
      INFO(dims << "-D, periodic " << periodic << ", " << forest.n_leaves() << " leaves");
      REQUIRE(system.rows() == forest.n_leaves() * cells[0] * cells[1] * cells[2]);
      std::map<std::pair<int, int>, double> entries;
      for (int r = 0; r < system.rows(); ++r) {
        double sum = 0, diagonal = 0;
        for (std::size_t e = system.row_start()[static_cast<std::size_t>(r)];
             e < system.row_start()[static_cast<std::size_t>(r) + 1]; ++e) {
          entries[{r, system.columns()[e]}] = system.laplacian()[e];
          sum += system.laplacian()[e];
          if (system.columns()[e] == r)
            diagonal = system.laplacian()[e];
          else
            CHECK(system.laplacian()[e] < 0);
        }
        CHECK(std::abs(sum) <= 1e-12 * diagonal);
      }
      for (const auto& [at, value] : entries) CHECK(entries.at({at.second, at.first}) == value);
      // The weights are volumes over the finest cell's: their sum is the domain over that volume.
      int finest = 0;
      for (const BlockKey& leaf : forest.leaves()) finest = std::max(finest, leaf.level);
      double weights = 0;
      for (double w : system.weights()) weights += w;
      double domain_cells = 1;
      for (int a = 0; a < dims; ++a)
        domain_cells *= static_cast<double>(forest.shape().roots[static_cast<std::size_t>(a)] *
                                            cells[static_cast<std::size_t>(a)]) *
                        std::ldexp(1.0, finest);
      CHECK(weights == doctest::Approx(domain_cells).epsilon(1e-14));
    }
}

#if KORCH_HAVE_KOKKOSKERNELS

TEST_CASE("forest conduction: on a forest of one level, the uniform grid's step") {
  for (int dims : {2, 3})
    for (bool periodic : {false, true}) {
      ForestShape shape;
      shape.dims = dims;
      shape.roots = {2, 1, dims > 2 ? 2 : 1};
      shape.periodic = {periodic, periodic, periodic && dims > 2};
      shape.max_level = 1;
      BlockForest forest(shape);
      forest.refine(forest.leaves());
      const std::array<int, 3> cells{6, 4, dims > 2 ? 2 : 1};
      const std::array<double, 3> root{0.1, 0.2, 0.15};
      const std::vector<std::int64_t> index = uniform_index(forest, cells, 1);
      const std::array<int, 3> n{24, 8, dims > 2 ? 8 : 1};
      std::vector<double> on_grid = random_field(index.size(), 3), on_forest(index.size());
      for (std::size_t r = 0; r < index.size(); ++r) on_forest[r] = on_grid[static_cast<std::size_t>(index[r])];
      conduct(on_grid, n, {0.05, 0.1, dims > 2 ? 0.075 : 1.0}, 2.0, 0.01, periodic, 1e-13);
      const ConductionOperator op(forest_conduction_system(forest, cells, root));
      op.solve(on_forest, 2.0 * 0.01, 1e-13, 1000, "test");
      INFO(dims << "-D, periodic " << periodic);
      for (std::size_t r = 0; r < index.size(); ++r)
        CHECK(on_forest[r] == doctest::Approx(on_grid[static_cast<std::size_t>(index[r])]).epsilon(1e-11));
    }
}

TEST_CASE("forest conduction: across levels the total heat is kept to round-off and no new extremum appears") {
  for (int dims : {1, 2, 3})
    for (bool periodic : {false, true}) {
      const BlockForest forest = random_forest(dims, periodic, 3, 11u + static_cast<unsigned>(dims));
      const std::array<int, 3> cells{4, dims > 1 ? 4 : 1, dims > 2 ? 2 : 1};
      const ConductionSystem system = forest_conduction_system(forest, cells, {0.5, 0.25, 0.3});
      const ConductionOperator op(system);
      std::vector<double> t = random_field(static_cast<std::size_t>(system.rows()), 5);
      const double before = weighted_total(system, t);
      const double low = *std::min_element(t.begin(), t.end()), high = *std::max_element(t.begin(), t.end());
      for (int step = 0; step < 4; ++step) {
        const ConductionResult result = op.solve(t, 0.02, 1e-8, 1000, "test");
        CHECK(result.iterations > 0);
      }
      INFO(dims << "-D, periodic " << periodic << ", " << forest.n_leaves() << " leaves");
      CHECK(std::abs(weighted_total(system, t) - before) <= 1e-13 * before);
      CHECK(*std::min_element(t.begin(), t.end()) >= low - 1e-7);
      CHECK(*std::max_element(t.begin(), t.end()) <= high + 1e-7);
      CHECK(*std::max_element(t.begin(), t.end()) - *std::min_element(t.begin(), t.end()) < 0.9 * (high - low));
    }
}

// Max |numerical - analytic| of a Gaussian (variance 0.05^2, kappa 0.5) in the unit square after its
// variance doubles in 32 steps, on a forest of 4 x 4 roots of 8^2 cells refined `levels` times
// within `radius` of the centre (all leaves: radius large).
double gaussian_error(int levels, double radius) {
  ForestShape shape;
  shape.dims = 2;
  shape.roots = {4, 4, 1};
  shape.max_level = levels;
  BlockForest forest(shape);
  const std::array<int, 3> cells{8, 8, 1};
  for (int pass = 0; pass < levels; ++pass) {
    std::vector<BlockKey> near;
    for (const BlockKey& leaf : forest.leaves()) {
      const double size = 0.25 / (1 << leaf.level);
      const double cx = (leaf.position[0] + 0.5) * size - 0.5, cy = (leaf.position[1] + 0.5) * size - 0.5;
      if (std::hypot(cx, cy) < radius + size) near.push_back(leaf);
    }
    forest.refine(near);
  }
  const double sigma2 = 0.05 * 0.05, kappa = 0.5, t_end = sigma2 / (2 * kappa);
  const auto profile = [](double x, double y, double variance) { return std::exp(-(x * x + y * y) / (2 * variance)); };
  std::vector<double> t, x, y;
  for (const BlockKey& leaf : forest.leaves()) {
    const double h = 1.0 / (32 << leaf.level);
    for (int j = 0; j < 8; ++j)
      for (int i = 0; i < 8; ++i) {
        x.push_back((leaf.position[0] * 8 + i + 0.5) * h - 0.5);
        y.push_back((leaf.position[1] * 8 + j + 0.5) * h - 0.5);
        t.push_back(profile(x.back(), y.back(), sigma2));
      }
  }
  const ConductionOperator op(forest_conduction_system(forest, cells, {1.0 / 32, 1.0 / 32, 1.0}));
  for (int step = 0; step < 32; ++step) op.solve(t, kappa * t_end / 32, 1e-12, 2000, "test");
  const double variance = sigma2 + 2 * kappa * t_end;
  double error = 0;
  for (std::size_t c = 0; c < t.size(); ++c)
    error = std::max(error, std::abs(t[c] - sigma2 / variance * profile(x[c], y[c], variance)));
  return error;
}

TEST_CASE("forest conduction: a Gaussian refined around its peak spreads as the analytic solution") {
  const double coarse = gaussian_error(0, 0), refined = gaussian_error(2, 0.1), fine = gaussian_error(2, 1.0);
  INFO("errors: roots only " << coarse << ", refined near the peak " << refined << ", all refined " << fine);
  CHECK(refined < 0.4 * coarse);  // measured 4.6e-3 and 1.4e-2, with 88 leaves and 256 refined everywhere
  CHECK(refined < 1.05 * fine);
}

#endif  // KORCH_HAVE_KOKKOSKERNELS

Options adaptive_with_conduction(HydroConfiguration config) {
  Options o;
  o.problem = Problem::sedov;
  o.threads = 1;
  o.blocks = 2;
  o.cells_per_block = 8;
  o.max_level = 2;
  o.regrid_every = 2;
  o.conduction = 0.05;
  o.config = config;
  o.quiet = true;
  o.write_output = false;
  return o;
}

struct Run {
  std::uint64_t hash = 0;
  double mass_before = 0, mass_after = 0;
  std::string summary;
};

// Six steps with a regrid after every second, on the step's estimates (one korch::Runtime at a time).
Run run_steps(const Options& o) {
  AmrSimulation sim(o, korch::Communicator{});
  Run r;
  r.mass_before = sim.totals()[0];
  for (int step = 0; step < 6; ++step) {
    sim.step(1e300, step % 2 == 1);
    if (step % 2 == 1) sim.regrid_on_step_estimates();
  }
  r.mass_after = sim.totals()[0];
  r.hash = sim.state_hash();
  r.summary = sim.summary();
  return r;
}

TEST_CASE("hydro AMR --conduction: heat spreads after each step, mass is kept, configurations agree") {
#if KORCH_HAVE_KOKKOSKERNELS
  const Run with = run_steps(adaptive_with_conduction(HydroConfiguration::cpu));
  Options plain = adaptive_with_conduction(HydroConfiguration::cpu);
  plain.conduction = 0;
  CHECK(std::abs(with.mass_after - with.mass_before) <= 1e-13 * with.mass_before);
  CHECK(with.hash != run_steps(plain).hash);
  CHECK(contains(with.summary, "conduction (CG on the composite mesh)"));
  const Run device = run_steps(adaptive_with_conduction(HydroConfiguration::device));
  if (korch::device_is_accelerator)
    CHECK(std::abs(device.mass_after - with.mass_after) <= 1e-13 * with.mass_after);
  else
    CHECK(device.hash == with.hash);
#endif
  CHECK_NOTHROW(validate(adaptive_with_conduction(HydroConfiguration::cpu)));
}

}  // namespace test_hydro_amr_conduction
