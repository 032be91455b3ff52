// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Distribution by throughput: a group's shares follow its pipelines' measured rates (the
// distributor alone, with exact shares), and a runtime whose one pipeline is far slower gives it
// few blocks from its second cycle on.
#include "test_runtime_support.hpp"

#include <korch/block_list.hpp>
#include <korch/bundle.hpp>
#include <korch/distributor.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <thread>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_runtime_throughput {

using namespace korch;
using namespace korch::test;

namespace {

// A two-pipeline throughput distributor over blocks that records each block's pipeline.
struct TwoPipelines {
  std::vector<int> owner;
  std::vector<std::size_t> count{0, 0};
  std::unique_ptr<DataParallelDistributor> d;

  explicit TwoPipelines(int n_blocks) : owner(static_cast<std::size_t>(n_blocks), -1) {
    auto push = [this](int i) {
      return [this, i](std::shared_ptr<DataItem> it) {
        owner[static_cast<std::size_t>(static_cast<Block&>(*it).block_id())] = i;
        ++count[static_cast<std::size_t>(i)];
      };
    };
    d = std::make_unique<DataParallelDistributor>(
        std::vector<DistributorTarget>{DistributorTarget{"a", DataType::block, push(0), {}, {}},
                                       DistributorTarget{"b", DataType::block, push(1), {}, {}}},
        DistributionPolicy::throughput, std::vector<double>{1, 1});
  }
  // One cycle's distribution, as the runtime makes it (the round robin restarts).
  void cycle(const Grid& g, BlockIterator* order = nullptr) {
    std::fill(owner.begin(), owner.end(), -1);
    count = {0, 0};
    d->restart_round_robin();
    d->distribute(g, nullptr, nullptr, order);
  }
};

GridSpec sixteen_blocks() {
  GridSpec s = small_tiled_spec();
  s.blocks = {4, 4, 1};
  return s;
}

}  // namespace

TEST_CASE("Distributor: a throughput group's shares follow the measured rates, keep still, and may leave one out") {
  Grid g(sixteen_blocks());
  TwoPipelines p(16);
  p.cycle(g);
  CHECK(p.count == std::vector<std::size_t>{8, 8});  // the weights at first
  // Rates 4 and 16 blocks per second: 3 and 13 of 16 blocks finish soonest (0.75 s and 0.81 s).
  CHECK(p.d->observe(0, {2.0, 0.5}));
  p.cycle(g);
  CHECK(p.count == std::vector<std::size_t>{3, 13});
  // The same rates again: nothing to gain, nothing moves.
  const std::vector<int> before = p.owner;
  CHECK_FALSE(p.d->observe(0, {0.75, 0.8125}));
  p.cycle(g);
  CHECK(p.owner == before);
  // A little faster or slower is not worth moving blocks for.
  CHECK_FALSE(p.d->observe(0, {0.78, 0.8}));
  // Pipeline a slowed down 100 times: each cycle its rate goes halfway to the one measured (one
  // slow cycle may be a core taken for a moment), so it keeps 1 block for two cycles; then a block
  // there would take longer than all 16 on b.
  CHECK(p.d->observe(0, {100.0, 0.8}));
  p.cycle(g);
  CHECK(p.count == std::vector<std::size_t>{1, 15});
  CHECK_FALSE(p.d->observe(0, {100.0, 0.9}));
  p.cycle(g);
  CHECK(p.count == std::vector<std::size_t>{1, 15});
  CHECK(p.d->observe(0, {100.0, 0.9}));
  p.cycle(g);
  CHECK(p.count == std::vector<std::size_t>{0, 16});
  // Unmeasured this cycle, a keeps the rate it was last measured at.
  CHECK_FALSE(p.d->observe(0, {0.0, 1.0}));
  CHECK(p.d->weights(0) == std::vector<double>{0.0, 1.0});
  CHECK_THROWS_WITH_AS(p.d->observe(0, {1.0}), doctest::Contains("1 times for the 2 pipelines"), Error);
}

TEST_CASE(
    "Distributor: with an iterator's own order, a throughput group's blocks keep their pipelines until "
    "the shares change") {
  Grid g(sixteen_blocks());
  TwoPipelines p(16);
  std::vector<int> order(16);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 random(7);
  std::vector<int> last;
  for (int cycle = 0; cycle < 4; ++cycle) {
    std::shuffle(order.begin(), order.end(), random);
    GivenOrder given(order);
    p.cycle(g, &given);
    CHECK(p.count == std::vector<std::size_t>{8, 8});
    if (cycle > 0) CHECK(p.owner == last);
    last = p.owner;
  }
  CHECK(p.d->observe(0, {2.0, 0.5}));
  GivenOrder given(order);
  p.cycle(g, &given);
  CHECK(p.count == std::vector<std::size_t>{3, 13});
}

TEST_CASE("Distributor: groups of the other policies ignore observe()") {
  Grid g(sixteen_blocks());
  auto none = [](std::shared_ptr<DataItem>) {};
  DataParallelDistributor d(
      {DistributorTarget{"a", DataType::block, none, {}, {}}, DistributorTarget{"b", DataType::block, none, {}, {}}},
      DistributionPolicy::fixed_fraction, {1, 3});
  d.distribute(g);
  CHECK_FALSE(d.observe(0, {10.0, 0.1}));
  CHECK(d.weights(0)[0] == doctest::Approx(1.0 / 3.0));
  CHECK_THROWS_WITH_AS(d.observe(5, {1.0, 1.0}), doctest::Contains("group 5, but the distributor has 1 group(s)"),
                       Error);
}

namespace {

// Two one-thread teams, one data-parallel group of both distributed by throughput.
Configuration slow_and_fast() {
  return Configuration::from_json(R"({
    "name": "slow_and_fast",
    "teams": [ {"name": "slow", "type": "block", "action": "S", "threads": 1},
               {"name": "fast", "type": "block", "action": "F", "threads": 1} ],
    "distributor": {"kind": "data_parallel", "groups": [ {"pipelines": ["slow", "fast"], "policy": "throughput"} ]}
  })");
}

// S sleeps 4 ms per block, F 0.1 ms; both add 1 to every interior cell of variable 0.
Bundle sleeping_bundle() {
  auto sleeping = [](const char* name, std::chrono::microseconds per_block) {
    return TypedAction(name)
        .on_block([per_block](const ActionContext&, Block& b) {
          const auto v = b.view();
          const Box& in = b.interior();
          for (int i = in.lo[0]; i < in.hi[0]; ++i)
            for (int j = in.lo[1]; j < in.hi[1]; ++j)
              for (int k = in.lo[2]; k < in.hi[2]; ++k) v(0, i, j, k) += 1.0;
          std::this_thread::sleep_for(per_block);
        })
        .routine();
  };
  Bundle bundle("throughput");
  bundle.add(sleeping("S", std::chrono::microseconds(4000)));
  bundle.add(sleeping("F", std::chrono::microseconds(100)));
  return bundle;
}

std::size_t items_of(const Runtime& rt, const std::string& pipeline) {
  for (const auto& [name, items] : rt.last_distribution())
    if (name == pipeline) return items;
  return 0;
}

}  // namespace

TEST_CASE("Runtime: a throughput group gives a far slower pipeline few blocks from its second cycle on") {
  Runtime rt;
  GridSpec s = small_tiled_spec();
  s.blocks = {6, 4, 1};  // 24 blocks
  Grid grid(s);
  const Configuration c = slow_and_fast();
  const Bundle bundle = sleeping_bundle();
  rt.execute(bundle, c, grid);
  CHECK(items_of(rt, "slow") == 12);
  // Another configuration over the same teams (as a code alternating two state sets runs) starts
  // from what the first learned.
  Configuration renamed = c;
  renamed.name = "slow_and_fast_again";
  for (int cycle = 0; cycle < 4; ++cycle) {
    rt.execute(bundle, cycle % 2 == 0 ? renamed : c, grid);
    // At 40 times the rate, fast finishes 23 blocks before slow finishes one: slow gets one block
    // or none. A loaded machine stretches the short sleeps more than the long ones: a few.
    CHECK(items_of(rt, "slow") <= 4);
  }
}

TEST_CASE(
    "Runtime: distribution by throughput over a code's own blocks (Fortran order, padded rows, odd sizes) "
    "updates every block once per cycle while the shares move") {
  // 24 blocks, each its own array u(i, j, k, var) with 2 variables, 1 guard cell in x and y and
  // 2 unused doubles after every row; interiors of 5x3 to 9x5 cells.
  constexpr int n_blocks = 24, vars = 2, pad = 2;
  struct Array {
    std::array<std::ptrdiff_t, 3> extent;
    std::vector<double> storage;
  };
  std::vector<Array> arrays(n_blocks);
  BlockList list("code mesh", vars);
  for (int b = 0; b < n_blocks; ++b) {
    BlockShape shape;
    shape.cells = {5 + 2 * (b % 3), 3 + b % 3, 1};
    shape.guard = {1, 1, 0};
    shape.index = {b % 6, b / 6, 0};
    Array& a = arrays[static_cast<std::size_t>(b)];
    a.extent = {std::ptrdiff_t{shape.cells[0]} + 2, std::ptrdiff_t{shape.cells[1]} + 2, 1};
    const std::ptrdiff_t row = a.extent[0] + pad, plane = row * a.extent[1];
    a.storage.assign(static_cast<std::size_t>(plane * vars), -3.0);
    list.add(shape, BlockArray::of(a.storage.data(), IndexOrder::i_j_k_var, {a.extent[0], a.extent[1], 1, vars},
                                   {1, row, plane, plane}));
  }
  for (Array& a : arrays) std::fill(a.storage.begin(), a.storage.end(), 0.0);
  Runtime rt;
  const Configuration c = slow_and_fast();
  const Bundle bundle = sleeping_bundle();
  constexpr int cycles = 4;
  std::vector<std::size_t> slow;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    rt.execute(bundle, c, list);
    slow.push_back(items_of(rt, "slow"));
  }
  CHECK(slow.front() == 12);
  CHECK(slow.back() <= 4);
  // Every interior cell of variable 0 was updated once per cycle; guard cells, padding and the
  // other variable untouched.
  for (int b = 0; b < n_blocks; ++b) {
    const Array& a = arrays[static_cast<std::size_t>(b)];
    const std::ptrdiff_t row = a.extent[0] + pad, plane = row * a.extent[1];
    for (std::ptrdiff_t v = 0; v < vars; ++v)
      for (std::ptrdiff_t j = 0; j < a.extent[1]; ++j)
        for (std::ptrdiff_t i = 0; i < row; ++i) {
          const bool interior = v == 0 && i >= 1 && i < a.extent[0] - 1 && j >= 1 && j < a.extent[1] - 1;
          CAPTURE(b);
          CAPTURE(i);
          CAPTURE(j);
          CAPTURE(v);
          REQUIRE(a.storage[static_cast<std::size_t>(v * plane + j * row + i)] == (interior ? cycles : 0.0));
        }
  }
}

}  // namespace test_runtime_throughput
