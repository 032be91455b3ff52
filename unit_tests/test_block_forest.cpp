// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// BlockForest: refinement and coarsening under 2:1 balance, the Morton order of the leaves, and
// every leaf's neighbours compared with the geometry of the leaves (which leaves a one-cell shell
// around a leaf touches), on random sequences of refines and derefines in 1-, 2- and 3-D, periodic
// and not.
#include <doctest/doctest.h>

#include <korch/block_forest.hpp>
#include <korch/error.hpp>

#include "test_error_support.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace {

using korch::test::error_of;

using korch::BlockForest;
using korch::BlockKey;
using korch::ForestNeighbour;
using korch::ForestShape;

// Sortable identity of a key, for comparing sets of neighbours.
using KeyTuple = std::tuple<int, std::int64_t, std::int64_t, std::int64_t>;
KeyTuple tuple_of(const BlockKey& k) { return {k.level, k.position[0], k.position[1], k.position[2]}; }

// The leaves that a one-cell shell outside `leaf` in direction `d` meets, on the finest level's
// cells; `boundary` when the shell lies beyond a non-periodic edge.
std::set<KeyTuple> touching_by_geometry(const BlockForest& forest, const BlockKey& leaf, const korch::Direction& d,
                                        bool& boundary) {
  const ForestShape& s = forest.shape();
  std::array<std::int64_t, 3> lo{}, hi{}, n{};
  boundary = false;
  for (int a = 0; a < 3; ++a) {
    n[a] = a < s.dims ? std::int64_t{s.roots[a]} << s.max_level : 1;
    const std::int64_t size = a < s.dims ? std::int64_t{1} << (s.max_level - leaf.level) : 1;
    const std::int64_t l = leaf.position[a] * size;
    lo[a] = d[a] == -1 ? l - 1 : d[a] == 1 ? l + size : l;
    hi[a] = d[a] == -1 ? l : d[a] == 1 ? l + size + 1 : l + size;
    if (lo[a] < 0 || hi[a] > n[a]) {
      if (!s.periodic[a]) boundary = true;
      const std::int64_t shift = lo[a] < 0 ? n[a] : -n[a];
      lo[a] += shift;
      hi[a] += shift;
    }
  }
  std::set<KeyTuple> found;
  if (boundary) return found;
  for (const BlockKey& other : forest.leaves()) {
    bool meets = true;
    for (int a = 0; a < s.dims; ++a) {
      const std::int64_t size = std::int64_t{1} << (s.max_level - other.level);
      const std::int64_t l = other.position[a] * size;
      meets = meets && l < hi[a] && lo[a] < l + size;
    }
    if (meets) found.insert(tuple_of(other));
  }
  return found;
}

// Every leaf's neighbours in every direction agree with the geometry, with the kinds right.
void check_neighbours(const BlockForest& forest) {
  for (const BlockKey& leaf : forest.leaves())
    for (const korch::Direction& d : korch::NeighbourList::directions(forest.shape().dims)) {
      bool boundary = false;
      const auto expected = touching_by_geometry(forest, leaf, d, boundary);
      const auto got = forest.neighbours(leaf, d);
      INFO(leaf.describe() << " direction " << korch::NeighbourList::name(d));
      if (boundary) {
        REQUIRE(got.size() == 1);
        CHECK(got[0].kind == ForestNeighbour::Kind::boundary);
        continue;
      }
      std::set<KeyTuple> keys;
      for (const ForestNeighbour& g : got) {
        keys.insert(tuple_of(g.key));
        const int step = g.key.level - leaf.level;
        CHECK(step == (g.kind == ForestNeighbour::Kind::finer ? 1 : g.kind == ForestNeighbour::Kind::coarser ? -1 : 0));
      }
      CHECK(keys == expected);
    }
}

}  // namespace

TEST_CASE("BlockForest: refining one block of 2x3 roots gives its children, coarser and finer neighbours") {
  BlockForest forest({2, {2, 3, 1}, {false, false, false}, 2});
  CHECK(forest.n_leaves() == 6);
  const BlockKey root{0, {1, 1, 0}};
  CHECK(forest.refine({root}) == 1);
  forest.check();
  CHECK(forest.n_leaves() == 9);
  CHECK(forest.leaves_per_level() == std::vector<int>{5, 4});
  CHECK_FALSE(forest.is_leaf(root));
  CHECK(forest.contains(root));

  const auto left = forest.neighbours({0, {0, 1, 0}}, {1, 0, 0});  // across the face: two finer leaves
  REQUIRE(left.size() == 2);
  CHECK(left[0].kind == ForestNeighbour::Kind::finer);
  const auto child = forest.neighbours({1, {2, 2, 0}}, {-1, 0, 0});
  REQUIRE(child.size() == 1);
  CHECK(child[0].kind == ForestNeighbour::Kind::coarser);
  CHECK(child[0].key == BlockKey{0, {0, 1, 0}});
  const auto edge = forest.neighbours({1, {3, 2, 0}}, {1, 0, 0});
  REQUIRE(edge.size() == 1);
  CHECK(edge[0].kind == ForestNeighbour::Kind::boundary);
  check_neighbours(forest);
}

TEST_CASE("BlockForest: 2:1 balance splits the coarser neighbours first, also across corners and periodic edges") {
  BlockForest forest({2, {4, 4, 1}, {true, true, false}, 4});
  // Refine the block at the corner (0, 0) down to level 4: the balance reaches around the periodic
  // edges to the blocks at (3, 3).
  BlockKey corner{0, {0, 0, 0}};
  for (int level = 0; level < 4; ++level) {
    forest.refine({corner});
    corner = forest.children(corner)[0];
    forest.check();
  }
  CHECK(forest.leaves_per_level().size() == 5);
  CHECK_FALSE(forest.is_leaf({0, {3, 3, 0}}));  // split for balance across the wrapped corner
  check_neighbours(forest);
  // A flagged leaf at max_level stays.
  CHECK(forest.refine({corner}) == 0);
}

TEST_CASE("BlockForest: leaves follow the Morton curve across levels") {
  BlockForest forest({2, {1, 1, 1}, {false, false, false}, 3});
  forest.refine({{0, {0, 0, 0}}});
  std::vector<KeyTuple> order;
  for (const BlockKey& k : forest.leaves()) order.push_back(tuple_of(k));
  CHECK(order == std::vector<KeyTuple>{{1, 0, 0, 0}, {1, 1, 0, 0}, {1, 0, 1, 0}, {1, 1, 1, 0}});
  forest.refine({{1, {1, 0, 0}}});
  // The four children of (1, 0) come right after (0, 0), before (0, 1).
  CHECK(tuple_of(forest.leaves()[1]) == KeyTuple{2, 2, 0, 0});
  CHECK(tuple_of(forest.leaves()[4]) == KeyTuple{2, 3, 1, 0});
  CHECK(tuple_of(forest.leaves()[5]) == KeyTuple{1, 0, 1, 0});
  CHECK(forest.leaf_index({1, {0, 1, 0}}) == 5);
}

TEST_CASE("BlockForest: derefine merges whole flagged families that stay balanced, finest first") {
  BlockForest forest({3, {2, 1, 1}, {false, false, false}, 2});
  forest.refine(forest.leaves());
  forest.refine(forest.leaves());
  CHECK(forest.n_leaves() == 2 * 64);
  // One missing sibling: nothing merges.
  auto most = forest.leaves();
  most.pop_back();
  CHECK(forest.derefine(most) == 16 - 1);
  forest.check();
  // One level per call: a family counts the leaves flagged when the call began, so the root whose
  // child was still split stays split, and merges in the next call.
  CHECK(forest.derefine(forest.leaves()) == 2);
  forest.check();
  CHECK(forest.n_leaves() == 1 + 8);
  std::vector<BlockKey> below_roots;
  for (const BlockKey& k : forest.leaves())
    if (k.level > 0) below_roots.push_back(k);
  CHECK(forest.derefine(below_roots) == 1);
  CHECK(forest.n_leaves() == 2);
  // Flagging a root names it: it has no family to merge into.
  CHECK(error_of([&] { forest.derefine(forest.leaves()); }).find("root block") != std::string::npos);
  // A leaf flagged twice counts once: the family merges.
  forest.refine({forest.leaves()[0]});
  std::vector<BlockKey> twice;
  for (const BlockKey& k : forest.leaves())
    if (k.level == 1) twice.insert(twice.end(), {k, k});
  CHECK(twice.size() == 16);
  CHECK(forest.derefine(twice) == 1);
  CHECK(forest.n_leaves() == 2);
}

TEST_CASE("BlockForest: derefine refuses a family whose merged block would touch a leaf two levels finer") {
  BlockForest forest({2, {1, 1, 1}, {false, false, false}, 3});
  forest.refine(forest.leaves());
  forest.refine({{1, {0, 0, 0}}});
  forest.refine({{2, {1, 1, 0}}});  // splits the other level-1 blocks for balance
  forest.check();
  CHECK_FALSE(forest.is_leaf({1, {1, 1, 0}}));
  // (1, 1) merged would touch the level-3 leaves at the corner of (2, 1, 1).
  const auto family = forest.children({1, {1, 1, 0}});
  CHECK(forest.derefine(family) == 0);
  CHECK(forest.is_leaf(family[0]));
  // Once the level-3 leaves merge (finest first, in the same call), the family may merge too.
  auto both = family;
  for (const BlockKey& k : forest.children({2, {1, 1, 0}})) both.push_back(k);
  CHECK(forest.derefine(both) == 2);
  forest.check();
  CHECK(forest.is_leaf({1, {1, 1, 0}}));
}

TEST_CASE("BlockForest: random refines and derefines keep every invariant and the neighbours right") {
  struct Case {
    ForestShape shape;
    int rounds;
  };
  const std::vector<Case> cases{{{1, {3, 1, 1}, {true, false, false}, 5}, 30},
                                {{2, {3, 2, 1}, {false, true, false}, 4}, 25},
                                {{2, {1, 1, 1}, {true, true, false}, 5}, 25},
                                {{3, {2, 1, 2}, {true, false, false}, 3}, 10}};
  std::mt19937 random(4217);
  for (const Case& c : cases) {
    BlockForest forest(c.shape);
    for (int round = 0; round < c.rounds; ++round) {
      std::vector<BlockKey> refine, derefine;
      for (const BlockKey& leaf : forest.leaves()) {
        const unsigned roll = random() % 10;
        if (roll < 2) refine.push_back(leaf);
        if (roll >= 6 && leaf.level > 0) derefine.push_back(leaf);
      }
      forest.refine(refine);
      forest.check();
      std::vector<BlockKey> still_leaves;
      for (const BlockKey& k : derefine)
        if (forest.is_leaf(k)) still_leaves.push_back(k);
      forest.derefine(still_leaves);
      forest.check();
    }
    INFO("dims " << c.shape.dims << ", " << forest.n_leaves() << " leaves");
    CHECK(forest.leaves_per_level().size() > 1);
    check_neighbours(forest);
  }
}

TEST_CASE("BlockForest: bad shapes, keys and directions are korch::Errors saying what to give") {
  CHECK(error_of([] { BlockForest({4, {1, 1, 1}, {}, 0}); }).find("give 1, 2 or 3") != std::string::npos);
  CHECK(error_of([] { BlockForest({2, {2, 0, 1}, {}, 0}); }).find("roots[1] = 0") != std::string::npos);
  CHECK(error_of([] { BlockForest({2, {2, 2, 3}, {}, 0}); }).find("roots[2] = 3") != std::string::npos);
  CHECK(error_of([] { BlockForest({2, {2, 2, 1}, {}, -1}); }).find("max_level = -1") != std::string::npos);
  CHECK(error_of([] { BlockForest({3, {1000, 1, 1}, {}, 20}); }).find("lower max_level") != std::string::npos);

  BlockForest forest({2, {2, 2, 1}, {}, 2});
  CHECK(error_of([&] {
          forest.refine({{1, {0, 0, 0}}});
        }).find("level 1 (0, 0, 0) is not a leaf") != std::string::npos);
  CHECK(error_of([&] {
          forest.neighbours({0, {0, 0, 0}}, {0, 0, 1});
        }).find("direction (0, 0, +1)") != std::string::npos);
  CHECK(error_of([&] {
          forest.neighbours({0, {0, 0, 0}}, {0, 0, 0});
        }).find("names the block itself") != std::string::npos);
  CHECK(error_of([&] { forest.parent({0, {1, 1, 0}}); }).find("has no parent") != std::string::npos);
}
