// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestGuardFill on the code's own arrays (two layouts, one padded) over forests of 2 and 3 levels:
// linear data come back exactly in every guard cell (same level, restricted, prolonged, and beyond
// the edges through the code's boundary values); random data keep the coarse means (conservative
// prolongation and restriction); outflow edges copy the nearest cell; mistakes are errors.
#include <doctest/doctest.h>

#include <korch/error.hpp>

#include "test_error_support.hpp"
#include "test_sanitized.hpp"
#include <korch/forest_guard_fill.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

using korch::test::error_of;

using korch::BlockArray;
using korch::BlockForest;
using korch::BlockKey;
using korch::ForestGuardFill;
using Cell = ForestGuardFill::Cell;

// Every leaf's array, alternately (i, j, k, var) with x fastest and (var, i, j, k) with i padded by
// 3 doubles, as two codes might store them.
struct Arrays {
  std::array<int, 3> cells, guard;
  int n_vars;
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, std::vector<double>> storage;
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, BlockArray> arrays;

  void attach(const BlockForest& forest, ForestGuardFill& fill) {
    int n = 0;
    for (const BlockKey& leaf : forest.leaves()) {
      const std::ptrdiff_t ni = cells[0] + 2 * guard[0], nj = cells[1] + 2 * guard[1], nk = cells[2] + 2 * guard[2];
      const auto id = std::make_tuple(leaf.level, leaf.position[0], leaf.position[1], leaf.position[2]);
      BlockArray a;
      if (n++ % 2 == 0) {
        storage[id].assign(static_cast<std::size_t>(ni * nj * nk * n_vars), NAN);
        a = BlockArray::of(storage[id].data(), korch::IndexOrder::i_j_k_var, {ni, nj, nk, n_vars},
                           {1, ni, ni * nj, ni * nj * nk});
      } else {
        const std::ptrdiff_t pi = n_vars * ni + 3;  // padding after each row of i
        storage[id].assign(static_cast<std::size_t>(pi * nj * nk), NAN);
        a = BlockArray::of(storage[id].data(), korch::IndexOrder::var_i_j_k, {n_vars, ni, nj, nk},
                           {1, n_vars, pi, pi * nj});
      }
      arrays[id] = a;
      fill.set_block(leaf, a);
    }
  }
  double& at(const BlockKey& leaf, int i, int j, int k, int var) {
    const BlockArray& a = arrays.at(std::make_tuple(leaf.level, leaf.position[0], leaf.position[1], leaf.position[2]));
    return a.data[var * a.stride[0] + (i + guard[0]) * a.stride[1] + (j + guard[1]) * a.stride[2] +
                  (k + guard[2]) * a.stride[3]];
  }
  // Calls f(leaf, i, j, k, interior) for every cell of every leaf, guard cells included.
  void each(const BlockForest& forest, const std::function<void(const BlockKey&, int, int, int, bool)>& f) {
    for (const BlockKey& leaf : forest.leaves())
      for (int k = -guard[2]; k < cells[2] + guard[2]; ++k)
        for (int j = -guard[1]; j < cells[1] + guard[1]; ++j)
          for (int i = -guard[0]; i < cells[0] + guard[0]; ++i)
            f(leaf, i, j, k, i >= 0 && i < cells[0] && j >= 0 && j < cells[1] && k >= 0 && k < cells[2]);
  }
};

// The centre of a cell of `level` (root blocks 1 wide).
std::array<double, 3> centre(const Arrays& a, int level, const Cell& cell) {
  std::array<double, 3> x{};
  for (int d = 0; d < 3; ++d) x[d] = (static_cast<double>(cell[d]) + 0.5) / (a.cells[d] * (1 << level));
  return x;
}

Cell cell_of(const Arrays& a, const BlockKey& leaf, int i, int j, int k) {
  return {leaf.position[0] * a.cells[0] + i, leaf.position[1] * a.cells[1] + j, leaf.position[2] * a.cells[2] + k};
}

// Linear data (exact cell means), filled and compared in every guard cell.
void check_linear(BlockForest& forest, Arrays arrays, const std::array<double, 3>& gradient) {
  const auto f = [&](const std::array<double, 3>& x, int var) {
    return (var + 1) * (1.0 + gradient[0] * x[0] + gradient[1] * x[1] + gradient[2] * x[2]);
  };
  ForestGuardFill fill(forest, arrays.cells, arrays.guard, arrays.n_vars);
  arrays.attach(forest, fill);
  fill.set_boundary([&](int level, const Cell& cell, int var) { return f(centre(arrays, level, cell), var); });
  arrays.each(forest, [&](const BlockKey& leaf, int i, int j, int k, bool interior) {
    if (!interior) return;
    for (int v = 0; v < arrays.n_vars; ++v)
      arrays.at(leaf, i, j, k, v) = f(centre(arrays, leaf.level, cell_of(arrays, leaf, i, j, k)), v);
  });
  fill.fill();
  int checked = 0;
  arrays.each(forest, [&](const BlockKey& leaf, int i, int j, int k, bool interior) {
    if (interior) return;
    Cell cell = cell_of(arrays, leaf, i, j, k);
    for (int d = 0; d < forest.shape().dims; ++d) {  // a periodic axis carries no gradient here
      const std::int64_t n = std::int64_t{forest.shape().roots[d]} * arrays.cells[d] << leaf.level;
      if (forest.shape().periodic[d]) cell[d] = ((cell[d] % n) + n) % n;
    }
    for (int v = 0; v < arrays.n_vars; ++v) {
      INFO(leaf.describe() << " guard cell " << i << " " << j << " " << k << " var " << v);
      CHECK(arrays.at(leaf, i, j, k, v) == doctest::Approx(f(centre(arrays, leaf.level, cell), v)).epsilon(1e-12));
      ++checked;
    }
  });
  CHECK(checked > 0);
}

}  // namespace

TEST_CASE("ForestGuardFill: linear data come back exactly in every guard cell of a 2-D forest of three levels") {
  BlockForest forest({2, {3, 2, 1}, {false, false, false}, 2});
  forest.refine({{0, {1, 0, 0}}});
  forest.refine({{1, {3, 1, 0}}});  // level 2 at the middle; its coarser neighbours split for balance
  forest.check();
  REQUIRE(forest.leaves_per_level().size() == 3);
  check_linear(forest, Arrays{{6, 6, 1}, {2, 2, 0}, 2, {}, {}}, {2.0, -3.0, 0.0});
  check_linear(forest, Arrays{{5, 7, 1}, {3, 1, 0}, 1, {}, {}}, {0.5, 1.5, 0.0});  // odd sizes
}

TEST_CASE("ForestGuardFill: linear data in 3-D, periodic along x, with guard cells across edges and corners") {
  BlockForest forest({3, {2, 1, 2}, {true, false, false}, 1});
  forest.refine({{0, {0, 0, 1}}});
  check_linear(forest, Arrays{{4, 4, 4}, {2, 2, 2}, 2, {}, {}}, {0.0, 1.0, -2.0});
}

TEST_CASE("ForestGuardFill: fill_leaf of some variables equals fill() there and leaves the others' guard cells") {
  BlockForest forest({2, {3, 2, 1}, {false, true, false}, 2});
  forest.refine({{0, {1, 0, 0}}});
  forest.refine({{1, {3, 1, 0}}});
  Arrays whole{{6, 6, 1}, {2, 2, 0}, 3, {}, {}}, some{{6, 6, 1}, {2, 2, 0}, 3, {}, {}};
  ForestGuardFill fill_whole(forest, whole.cells, whole.guard, whole.n_vars);
  ForestGuardFill fill_some(forest, some.cells, some.guard, some.n_vars);
  whole.attach(forest, fill_whole);
  some.attach(forest, fill_some);
  std::mt19937 random(7);
  std::uniform_real_distribution<double> value(0.5, 2.0);
  whole.each(forest, [&](const BlockKey& leaf, int i, int j, int k, bool interior) {
    if (!interior) return;
    for (int v = 0; v < 3; ++v) some.at(leaf, i, j, k, v) = whole.at(leaf, i, j, k, v) = value(random);
  });
  fill_whole.fill();
  for (const BlockKey& leaf : forest.leaves()) fill_some.fill_leaf(leaf, 1, 1);
  int compared = 0;
  whole.each(forest, [&](const BlockKey& leaf, int i, int j, int k, bool interior) {
    if (interior) return;
    CHECK(some.at(leaf, i, j, k, 1) == whole.at(leaf, i, j, k, 1));  // the same bits
    CHECK(std::isnan(some.at(leaf, i, j, k, 0)));                    // not written
    CHECK(std::isnan(some.at(leaf, i, j, k, 2)));
    ++compared;
  });
  CHECK(compared > 0);
  CHECK(
      korch::test::contains(error_of([&] { fill_some.fill_leaf(forest.leaves()[0], 2, 2); }), "variables 2 .. 3 of 3"));
}

TEST_CASE(
    "ForestGuardFill: random data keep coarse means, outflow edges copy the nearest cell, an empty boundary restores "
    "that") {
  BlockForest forest({2, {2, 2, 1}, {true, false, false}, 2});
  forest.refine({{0, {0, 0, 0}}});
  forest.refine({{1, {1, 1, 0}}});
  Arrays arrays{{4, 6, 1}, {2, 2, 0}, 1, {}, {}};
  ForestGuardFill fill(forest, arrays.cells, arrays.guard, 1);
  arrays.attach(forest, fill);
  std::mt19937 random(7);
  std::uniform_real_distribution<double> value(0.5, 2.0);
  arrays.each(forest, [&](const BlockKey& leaf, int i, int j, int k, bool interior) {
    if (interior) arrays.at(leaf, i, j, k, 0) = value(random);
  });
  fill.fill();
  // Every level-1 and level-0 cell is the mean of its four children, wherever they come from.
  for (int level = 0; level < 2; ++level) {
    const std::int64_t nx = std::int64_t{2} * 4 << level, ny = std::int64_t{2} * 6 << level;
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        double sum = 0.0;
        for (int c = 0; c < 4; ++c) sum += fill.value_at(level + 1, {2 * x + (c & 1), 2 * y + (c >> 1), 0}, 0);
        CHECK(sum / 4 == doctest::Approx(fill.value_at(level, {x, y, 0}, 0)).epsilon(1e-13));
      }
  }
  // Guard cells are composite values; beyond the edges in y, those of the nearest row.
  arrays.each(forest, [&](const BlockKey& leaf, int i, int j, int k, bool interior) {
    if (interior) return;
    Cell cell = cell_of(arrays, leaf, i, j, k);
    const std::int64_t ny = std::int64_t{2} * 6 << leaf.level;
    cell[1] = std::min<std::int64_t>(std::max<std::int64_t>(cell[1], 0), ny - 1);
    CHECK(arrays.at(leaf, i, j, k, 0) == fill.value_at(leaf.level, cell, 0));
  });
  // Filling again changes no bit: only interior cells are read.
  std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, std::vector<double>> before = arrays.storage;
  fill.fill();
  for (const auto& [id, data] : arrays.storage)
    for (std::size_t n = 0; n < data.size(); ++n)
      if (!std::isnan(data[n])) CHECK(data[n] == before[id][n]);
  // A boundary of the code's own, then an empty one: the outflow rule is back, bit for bit.
  fill.set_boundary([](int, const Cell&, int) { return 7.0; });
  fill.fill();
  int walls = 0;
  arrays.each(forest, [&](const BlockKey& leaf, int i, int j, int k, bool interior) {
    const Cell cell = cell_of(arrays, leaf, i, j, k);
    if (!interior && (cell[1] < 0 || cell[1] >= std::int64_t{2} * 6 << leaf.level))
      walls += arrays.at(leaf, i, j, k, 0) == 7.0;
  });
  CHECK(walls > 0);
  fill.set_boundary(nullptr);
  fill.fill();
  for (const auto& [id, data] : arrays.storage)
    for (std::size_t n = 0; n < data.size(); ++n)
      if (!std::isnan(data[n])) CHECK(data[n] == before[id][n]);
}

TEST_CASE("ForestGuardFill: wrong arrays, missing leaves and a changed forest are korch::Errors naming the block") {
  BlockForest forest({2, {2, 1, 1}, {false, false, false}, 1});
  CHECK(error_of([&] { ForestGuardFill(forest, {4, 4, 2}, {1, 1, 0}, 1); }).find("cells[2] = 2") != std::string::npos);
  CHECK(error_of([&] { ForestGuardFill(forest, {4, 4, 1}, {1, 1, 0}, 0); }).find("n_vars = 0") != std::string::npos);
  ForestGuardFill fill(forest, {4, 4, 1}, {1, 1, 0}, 2);
  std::vector<double> small(6 * 6 * 1);
  const auto wrong = BlockArray::of(small.data(), korch::IndexOrder::i_j_k_var, {6, 6, 1, 1}, {1, 6, 36, 36});
  const std::string shape = error_of([&] { fill.set_block({0, {1, 0, 0}}, wrong); });
  CHECK(shape.find("level 0 (1, 0, 0)") != std::string::npos);
  CHECK(shape.find("(1, 6, 6, 1)") != std::string::npos);
  CHECK(shape.find("(2, 6, 6, 1)") != std::string::npos);
  CHECK(error_of([&] { fill.set_block({1, {0, 0, 0}}, wrong); }).find("not a leaf") != std::string::npos);

  std::vector<double> a(2 * 36), b(2 * 36);
  fill.set_block({0, {0, 0, 0}}, BlockArray::of(a.data(), korch::IndexOrder::i_j_k_var, {6, 6, 1, 2}, {1, 6, 36, 36}));
  CHECK(error_of([&] { fill.fill(); }).find("level 0 (1, 0, 0) has no data") != std::string::npos);
  fill.set_block({0, {1, 0, 0}}, BlockArray::of(b.data(), korch::IndexOrder::i_j_k_var, {6, 6, 1, 2}, {1, 6, 36, 36}));
  fill.fill();
  CHECK(error_of([&] { fill.value_at(0, {-1, 0, 0}, 0); }).find("beyond the domain") != std::string::npos);
  forest.refine({{0, {0, 0, 0}}});
  CHECK(error_of([&] { fill.fill(); }).find("no longer a leaf") != std::string::npos);
}

namespace {

// Every guard cell of every leaf against value_at, the cell-by-cell reference: same bits.
int compare_with_reference(const BlockForest& forest, Arrays& arrays, const ForestGuardFill& fill) {
  int compared = 0, differ = 0;
  std::string first;
  arrays.each(forest, [&](const BlockKey& leaf, int i, int j, int k, bool interior) {
    if (interior) return;
    Cell cell = cell_of(arrays, leaf, i, j, k);
    for (int d = 0; d < forest.shape().dims; ++d) {
      const std::int64_t n = std::int64_t{forest.shape().roots[d]} * arrays.cells[d] << leaf.level;
      if (!forest.shape().periodic[d]) cell[d] = std::min<std::int64_t>(std::max<std::int64_t>(cell[d], 0), n - 1);
    }
    for (int v = 0; v < arrays.n_vars; ++v, ++compared)
      if (!(arrays.at(leaf, i, j, k, v) == fill.value_at(leaf.level, cell, v)) && differ++ == 0)
        first = leaf.describe() + " guard cell " + std::to_string(i) + " " + std::to_string(j) + " " +
                std::to_string(k) + " var " + std::to_string(v);
  });
  INFO("first difference: " << first);
  CHECK(differ == 0);
  return compared;
}

void random_interior(const BlockForest& forest, Arrays& arrays, std::mt19937& random) {
  std::uniform_real_distribution<double> value(0.5, 2.0);
  arrays.each(forest, [&](const BlockKey& leaf, int i, int j, int k, bool interior) {
    if (!interior) return;
    for (int v = 0; v < arrays.n_vars; ++v) arrays.at(leaf, i, j, k, v) = value(random);
  });
}

}  // namespace

TEST_CASE("ForestGuardFill: a leaf's plan fills the same bits as the cell-by-cell reference, fill after fill") {
  std::mt19937 random(11);
  // Trials 0 to 3 already mix 2-D and 3-D, wide guard cells and periodic axes: a sanitizer build,
  // whose instrumented reference is slow, stops there.
  const int trials = korch::test::kSanitized ? 4 : 8;
  for (int trial = 0; trial < trials; ++trial) {
    const int dims = 2 + trial % 2;
    const bool wide = trial % 4 == 1;  // guard cells wider than half a block: restriction over two levels
    korch::ForestShape shape{dims, {2, 3, dims == 3 ? 2 : 1}, {trial % 3 == 0, trial % 2 == 0, false}, 3};
    BlockForest forest(shape);
    for (int round = 0; round < 3; ++round) {
      std::vector<BlockKey> flagged;
      for (const BlockKey& leaf : forest.leaves())
        if (random() % 4 == 0) flagged.push_back(leaf);
      forest.refine(flagged);
    }
    INFO("trial " << trial << ", " << forest.n_leaves() << " leaves");
    Arrays arrays{{4, 6, dims == 3 ? 4 : 1}, {wide ? 3 : 2, 2, dims == 3 ? 2 : 0}, 3, {}, {}};
    ForestGuardFill fill(forest, arrays.cells, arrays.guard, arrays.n_vars);
    arrays.attach(forest, fill);
    random_interior(forest, arrays, random);
    fill.fill();
    CHECK(compare_with_reference(forest, arrays, fill) > 0);
    // New interior values, the same plans: the guard cells follow them.
    random_interior(forest, arrays, random);
    fill.fill();
    compare_with_reference(forest, arrays, fill);
    // One leaf's data moved: every plan that read it reads the new array.
    const BlockKey moved = forest.leaves()[static_cast<std::size_t>(trial) % forest.leaves().size()];
    const auto id = std::make_tuple(moved.level, moved.position[0], moved.position[1], moved.position[2]);
    std::vector<double> copy = arrays.storage.at(id);
    for (double& x : copy) x = std::isnan(x) ? x : x * 1.5;
    arrays.storage[id].swap(copy);
    arrays.arrays[id].data = arrays.storage[id].data();
    fill.set_block(moved, arrays.arrays[id]);
    fill.fill();
    compare_with_reference(forest, arrays, fill);
  }
}
