// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distributors (action parallel, data parallel by fraction or queue depth, an iterator's own order,
// batched targets) and the item cache.
#include "test_runtime_support.hpp"

#include <korch/distributor.hpp>
#include <korch/item_cache.hpp>

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_runtime_distribution {

using namespace korch;
using namespace korch::test;

TEST_CASE("Distributor: action parallel puts every item exactly once into each pipeline") {
  Grid g(small_tiled_spec());
  std::vector<std::string> a, b;
  ActionParallelDistributor d(
      {DistributorTarget{
           "tiles", DataType::tile, [&](std::shared_ptr<DataItem> it) { a.push_back(it->describe()); }, {}, {}},
       DistributorTarget{
           "blocks", DataType::block, [&](std::shared_ptr<DataItem> it) { b.push_back(it->describe()); }, {}, {}}});
  d.distribute(g);
  CHECK(a.size() == 16);
  CHECK(b.size() == 4);
  CHECK(std::set<std::string>(a.begin(), a.end()).size() == 16);
  CHECK(std::set<std::string>(b.begin(), b.end()).size() == 4);
}

TEST_CASE("Distributor: data parallel sends each block to exactly one pipeline, by static fraction or queue depth") {
  GridSpec s = small_tiled_spec();
  s.blocks = {4, 4, 1};
  Grid g(s);
  std::vector<int> owner(16, -1);
  std::vector<int> count(2, 0);
  auto push = [&](int i) {
    return [&, i](std::shared_ptr<DataItem> it) {
      const int b = static_cast<Block&>(*it).block_id();
      CHECK(owner[static_cast<std::size_t>(b)] == -1);
      owner[static_cast<std::size_t>(b)] = i;
      ++count[static_cast<std::size_t>(i)];
    };
  };
  DataParallelDistributor stat({DistributorTarget{"a", DataType::block, push(0), {}, {}},
                                DistributorTarget{"b", DataType::block, push(1), {}, {}}},
                               DistributionPolicy::fixed_fraction, {1, 3});
  stat.distribute(g);
  CHECK(count[0] == 4);
  CHECK(count[1] == 12);
  std::fill(owner.begin(), owner.end(), -1);
  count = {0, 0};
  DataParallelDistributor dyn(
      {DistributorTarget{"a", DataType::block, push(0), [&] { return static_cast<std::size_t>(count[0]); }, {}},
       DistributorTarget{"b", DataType::block, push(1), [] { return std::size_t{1000}; }, {}}},
      DistributionPolicy::queue_depth);
  dyn.distribute(g);
  CHECK(count[0] > count[1]);
  CHECK(count[0] + count[1] == 16);
}

TEST_CASE("Distributor: with an iterator's own order of every block, each block keeps its fixed-fraction pipeline") {
  GridSpec s = small_tiled_spec();
  s.blocks = {4, 4, 1};
  Grid g(s);
  std::vector<int> owner(16, -1);
  auto push = [&](int i) {
    return [&, i](std::shared_ptr<DataItem> it) {
      owner[static_cast<std::size_t>(static_cast<Block&>(*it).block_id())] = i;
    };
  };
  DataParallelDistributor d({DistributorTarget{"a", DataType::block, push(0), {}, {}},
                             DistributorTarget{"b", DataType::block, push(1), {}, {}}},
                            DistributionPolicy::fixed_fraction, {1, 3});
  d.distribute(g);  // ascending ids
  const std::vector<int> in_id_order = owner;
  std::vector<int> order(16);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 random(5);
  for (int cycle = 0; cycle < 4; ++cycle) {
    std::shuffle(order.begin(), order.end(), random);
    GivenOrder given(order);
    std::fill(owner.begin(), owner.end(), -1);
    d.distribute(g, nullptr, nullptr, &given);
    CHECK(owner == in_id_order);
  }
  CHECK(std::count(in_id_order.begin(), in_id_order.end(), 0) == 4);
}

TEST_CASE("Distributor: batched targets get every item once, in order, in batches that double from one block") {
  GridSpec s = small_tiled_spec();
  s.blocks = {4, 4, 2};
  Grid g(s);  // 32 blocks of 4 tiles
  for (auto policy : {DistributionPolicy::fixed_fraction, DistributionPolicy::queue_depth}) {
    std::vector<std::vector<std::size_t>> batches(2);
    std::vector<std::vector<std::pair<int, int>>> got(2);
    auto batch_push = [&](std::size_t i) {
      return [&, i](std::vector<std::shared_ptr<DataItem>> items) {
        batches[i].push_back(items.size());
        for (auto& it : items) {
          const auto& t = static_cast<Tile&>(*it);
          got[i].emplace_back(t.block_id(), t.tile_index());
        }
      };
    };
    auto single = [](std::shared_ptr<DataItem>) { FAIL("push_batch is given: push must not be used"); };
    DataParallelDistributor d({DistributorTarget{"a", DataType::tile, single, {}, batch_push(0)},
                               DistributorTarget{"b", DataType::tile, single, {}, batch_push(1)}},
                              policy, {}, RoutingUnit::tile);
    const auto counts = d.distribute(g);
    CHECK(counts[0][0] + counts[0][1] == 128);
    std::set<std::pair<int, int>> all;
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(counts[0][i] == got[i].size());
      CHECK(std::is_sorted(got[i].begin(), got[i].end()));  // block-major order kept per target
      all.insert(got[i].begin(), got[i].end());
      REQUIRE(!batches[i].empty());
      CHECK(batches[i].front() <= 4);  // the first items go out after the first block
      for (auto n : batches[i]) CHECK(n <= Distributor::kMaxBatch);
      if (policy == DistributionPolicy::fixed_fraction) {
        CHECK(batches[i].size() < 16);  // far fewer pushes than items
      } else {
        CHECK(*std::max_element(batches[i].begin(), batches[i].end()) <= 4);  // fresh depths each block
      }
    }
    CHECK(all.size() == 128);
  }
  CHECK_THROWS_WITH_AS(DataParallelDistributor({DistributorTarget{"mute", DataType::tile, {}, {}, {}}},
                                               DistributionPolicy::fixed_fraction),
                       doctest::Contains("target 'mute' of group 0 has neither push nor push_batch"), Error);
}

TEST_CASE("ItemCache: reuses items nobody holds, replaces held ones, and forgets a different grid") {
  Grid g(small_tiled_spec());
  ItemCache cache;
  CHECK_THROWS_WITH_AS(cache.tile(0, 0), doctest::Contains("bind"), Error);
  cache.bind(g);
  auto t = cache.tile(1, 2);
  CHECK(t->block_id() == 1);
  CHECK(t->tile_index() == 2);
  CHECK(&t->grid() == &g);
  const Tile* first = t.get();
  auto held = cache.tile(1, 2);  // still held by `t`: a new item
  CHECK(held.get() != first);
  t.reset();
  const Tile* second = held.get();
  held.reset();
  CHECK(cache.tile(1, 2).get() == second);  // nobody holds it: the same item again
  const Block* b = cache.block(3).get();
  CHECK(cache.block(3).get() == b);
  CHECK(cache.block(3)->block_id() == 3);
  CHECK_THROWS_WITH_AS(cache.tile(9, 0), doctest::Contains("block"), Error);
  CHECK_THROWS_WITH_AS(cache.tile(0, 99), doctest::Contains("tile 99"), Error);

  Grid other(small_tiled_spec({0, 0, 0}));  // another grid, another tiling
  cache.bind(other);
  auto whole = cache.tile(1, 0);
  CHECK(&whole->grid() == &other);
  CHECK(whole->box() == other.tile_box(0));
  cache.bind(g);
  CHECK(&cache.tile(1, 2)->grid() == &g);
  CHECK(cache.tile(1, 2)->box() == g.tile_box(2));
}

}  // namespace test_runtime_distribution
