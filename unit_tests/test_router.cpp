// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Routers: the data-parallel split in the middle of a pipeline (docs/data-packets.md, "Routers").
// The running-count choice on its own, the built-in big_example (A on the host for every block,
// then B on the device or on the host, then C on the device), a host-only split of single tiles,
// random fractions and grids, failures, record/replay, and the configuration errors.
#include "test_runtime_support.hpp"

#include <korch/configurations/builtin.hpp>
#include <korch/router.hpp>
#include <korch/runtime.hpp>

#include <cmath>
#include <map>
#include <random>
#include <stdexcept>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_router {

using namespace korch;
using namespace korch::test;

namespace {

GridSpec spec(std::array<int, 3> blocks, std::array<int, 3> block_cells = {8, 8, 8}) {
  GridSpec s;
  s.block_cells = block_cells;
  s.blocks = blocks;
  s.guard = 1;
  s.n_vars = 3;
  s.tile_cells = {4, 4, 4};
  return s;
}

const Affine A{"A", 0, 0, 2.0, 0.0, 1.0};  // v0 = 2 v0 + 1
const Affine B{"B", 1, 0, 1.0, 1.0, 0.0};  // v1 = v1 + v0 (after A)
const Affine C{"C", 2, 1, 1.0, 1.0, 0.0};  // v2 = v2 + v1 (after B)

Bundle bundle_of(const std::vector<Affine>& actions, ActionLog* log) {
  Bundle b("router bundle");
  for (const auto& a : actions) b.add(affine_routine(a, log));
  return b;
}

Configuration with_fraction(Configuration c, const std::string& router, double fraction) {
  for (auto& h : c.helpers)
    if (h.name == router) h.fraction = fraction;
  return c;
}

// A host-only pipeline that splits single tiles: a(A) -> split -> [b_first(B), b_rest(B)] -> c(C).
Configuration host_tile_split(double fraction, unsigned router_threads) {
  auto c = Configuration::from_json(R"({
    "name": "host_tile_split",
    "teams": [ {"name": "a", "type": "tile", "action": "A", "threads": 2},
               {"name": "b_first", "type": "tile", "action": "B", "threads": 1},
               {"name": "b_rest", "type": "tile", "action": "B", "threads": 1},
               {"name": "c", "type": "tile", "action": "C", "threads": 1} ],
    "helpers": [ {"name": "split", "kind": "router", "input": "tile", "fraction": 0.5, "to": ["b_first", "b_rest"],
                  "unit": "tile"} ],
    "work": [ {"from": "a", "to": "split"}, {"from": "b_first", "to": "c"}, {"from": "b_rest", "to": "c"} ],
    "distributor": {"kind": "action_parallel", "groups": [ {"pipelines": ["a"]} ]}
  })");
  c.helpers[0].fraction = fraction;
  c.helpers[0].threads = router_threads;
  return c;
}

std::size_t enqueued(const Runtime& rt, const std::string& node) {
  for (const auto& r : rt.last_reports())
    if (r.node == node) return r.cycle.enqueued;
  FAIL("no report for node " << node);
  return 0;
}

// A before B before C on each tile. A team on tiles logs each tile; one on packets of blocks logs
// each block once, without a tile (as the whole block): then every earlier action on any tile of
// that block comes before it, and every later one after it. The router hands on tiles as A
// finishes them, so the tiles of one block may be at different stages.
void check_order_per_tile(const ActionLog& log, const Grid& grid) {
  // (block, action) -> seq of each tile, or of the whole block at key -1
  std::map<std::pair<int, std::string>, std::map<int, std::uint64_t>> seq;
  for (const auto& e : log.entries()) {
    INFO("block " << e.block << " tile " << e.tile << " action " << e.action);
    CHECK(seq[{e.block, e.action}].emplace(e.tile, e.seq).second);  // at most once
  }
  const auto at = [&](int b, const std::string& action, int t) {
    const auto& m = seq[{b, action}];
    const auto it = m.find(t);
    return it != m.end() ? it->second : m.at(-1);
  };
  for (int b = 0; b < grid.n_blocks(); ++b) {
    for (int t = 0; t < grid.tiles_per_block(); ++t) {
      INFO("block " << b << " tile " << t);
      CHECK(at(b, "A", t) < at(b, "B", t));
      CHECK(at(b, "B", t) < at(b, "C", t));
    }
  }
}

struct SplitRun {
  std::size_t first = 0, rest = 0;  // items the router gave each way
};

SplitRun run_split(Runtime& rt, const Configuration& c, const std::string& first, const std::string& rest,
                   const GridSpec& s) {
  Grid grid(s);
  fill_pattern(grid);
  Grid reference = grid.clone();
  apply_reference(reference, {A, B, C});
  ActionLog log;
  rt.execute(bundle_of({A, B, C}, &log), c, grid);
  check_log(log, grid, {"A", "B", "C"}, {});
  check_order_per_tile(log, grid);
  CHECK(grid.max_interior_difference(reference) == 0.0);
  CHECK(rt.pinned_pool().outstanding_bytes() == 0);
  CHECK(rt.device_pool().outstanding_bytes() == 0);
  return SplitRun{enqueued(rt, first), enqueued(rt, rest)};
}

}  // namespace

TEST_CASE("Router: after n units the first subscriber has had floor(n * fraction) of them, at every n") {
  Grid grid(spec({2, 1, 1}));
  const Tile tile(grid, 0, 0);
  for (double f : {0.0, 0.25, 1.0 / 3.0, 0.5, 0.7, 1.0}) {
    CAPTURE(f);
    Router r("r", f, RoutingUnit::tile);
    for (int n = 1; n <= 100; ++n) {
      r.route(tile);
      CHECK(r.counts()[0] == static_cast<std::size_t>(std::floor(n * f)));
      CHECK(r.counts()[0] + r.counts()[1] == static_cast<std::size_t>(n));
    }
  }
}

TEST_CASE("Router: with unit block every tile of a block goes the way its block's first tile went") {
  Grid grid(spec({4, 2, 1}));  // 8 blocks of 8 tiles
  Router r("r", 0.25, RoutingUnit::block);
  std::map<int, std::size_t> way;
  for (int t = 0; t < grid.tiles_per_block(); ++t) {
    for (int b = grid.n_blocks() - 1; b >= 0; --b) {  // tiles of the blocks interleaved
      const std::size_t w = r.route(Tile(grid, b, t));
      const auto it = way.emplace(b, w).first;
      CHECK(it->second == w);
    }
  }
  CHECK(r.counts()[0] == 2);  // blocks, not tiles: a quarter of 8
  CHECK(r.counts()[1] == 6);
  CHECK(r.route(Block(grid, 3)) == way.at(3));
}

TEST_CASE("Router: anything but a tile or a block, or a fraction outside [0, 1], is an error naming the router") {
  Grid grid(spec({1, 1, 1}));
  Router r("split_b", 0.5, RoutingUnit::block);
  struct Other : DataItem {};
  const Other other;
  CHECK_THROWS_WITH_AS(r.route(other), doctest::Contains("router 'split_b'"), Error);
  CHECK_THROWS_WITH_AS(r.hand_on(other), doctest::Contains("router 'split_b'"), Error);
  CHECK_THROWS_WITH_AS(Router("r", 1.5, RoutingUnit::tile), doctest::Contains("fraction 1.5"), Error);
  CHECK_THROWS_WITH_AS(Router("r", std::nan(""), RoutingUnit::tile), doctest::Contains("router 'r'"), Error);
  const auto copy = r.hand_on(Tile(grid, 0, 3));
  REQUIRE(dynamic_cast<Tile*>(copy.get()));
  CHECK(dynamic_cast<Tile&>(*copy).tile_index() == 3);
}

TEST_CASE(
    "Router: big_example applies A on the host to every block, then B on the device for a quarter of the "
    "blocks and on the host for the rest, then C on the device, each once and in that order") {
  Runtime rt;
  const GridSpec s = spec({4, 4, 4});  // 64 blocks of 8 tiles
  const auto c = with_fraction(configurations::get("big_example"), "split_b", 0.25);
  const SplitRun got = run_split(rt, c, "to_b_gpu", "b_cpu", s);
  CHECK(got.first == 16 * 8);  // a quarter of the 64 blocks, as tiles, packed for the device
  CHECK(got.rest == 48 * 8);
  CHECK(enqueued(rt, "a_cpu") == 64 * 8);
  CHECK(enqueued(rt, "split_b") == 64 * 8);
  CHECK(enqueued(rt, "b_gpu") == 8);  // 16 blocks in packets of 2
  CHECK(enqueued(rt, "c_gpu") == 8 + 24);
  CHECK(rt.device_pool().high_water_bytes() > 0);
}

TEST_CASE("Router: the built-in big_example splits the blocks in half between B on the device and B on the host") {
  Runtime rt;
  const SplitRun got = run_split(rt, configurations::get("big_example"), "to_b_gpu", "b_cpu", spec({4, 2, 2}));
  CHECK(got.first == 8 * 8);
  CHECK(got.rest == 8 * 8);
}

TEST_CASE("Router: single tiles split between two host teams by the fraction, with fractions 0 and 1 at the ends") {
  Runtime rt;
  const GridSpec s = spec({4, 2, 2});  // 128 tiles
  for (double f : {0.0, 0.25, 0.6, 1.0}) {
    CAPTURE(f);
    const SplitRun got = run_split(rt, host_tile_split(f, 2), "b_first", "b_rest", s);
    CHECK(got.first == static_cast<std::size_t>(std::floor(128 * f)));
    CHECK(got.first + got.rest == 128);
  }
}

TEST_CASE(
    "Router: random fractions, grids and router threads keep every action once per item, in order, with "
    "the split the fraction asks for") {
  Runtime rt;
  std::mt19937 rng(20261);
  std::uniform_real_distribution<double> share(0.0, 1.0);
  for (int round = 0; round < 10; ++round) {
    const double f = share(rng);
    const bool tiles = rng() % 2 == 0;
    const unsigned threads = 1 + static_cast<unsigned>(rng() % 2);
    const GridSpec s =
        spec({1 + static_cast<int>(rng() % 4), 1 + static_cast<int>(rng() % 3), 1 + static_cast<int>(rng() % 3)},
             {4 + 4 * static_cast<int>(rng() % 2), 4 + 4 * static_cast<int>(rng() % 2), 4});
    const Grid probe(s);
    const auto n_blocks = static_cast<std::size_t>(probe.n_blocks());
    const auto per_block = static_cast<std::size_t>(probe.tiles_per_block());
    CAPTURE(round);
    CAPTURE(f);
    CAPTURE(tiles);
    CAPTURE(n_blocks);
    if (tiles) {
      const SplitRun got = run_split(rt, host_tile_split(f, threads), "b_first", "b_rest", s);
      CHECK(got.first == static_cast<std::size_t>(std::floor(static_cast<double>(n_blocks * per_block) * f)));
      CHECK(got.first + got.rest == n_blocks * per_block);
    } else {
      auto c = with_fraction(configurations::get("big_example"), "split_b", f);
      c.helpers[0].threads = threads;
      const SplitRun got = run_split(rt, c, "to_b_gpu", "b_cpu", s);
      CHECK(got.first == static_cast<std::size_t>(std::floor(static_cast<double>(n_blocks) * f)) * per_block);
      CHECK(got.first + got.rest == n_blocks * per_block);
    }
  }
}

TEST_CASE(
    "Router: a throwing action on either side of the router fails the cycle with its error; no hang, pools "
    "balance, the runtime runs big_example again") {
  Runtime rt;
  for (const char* failing : {"A", "B", "C"}) {
    CAPTURE(failing);
    Grid grid(spec({4, 2, 2}));
    fill_pattern(grid);
    Bundle b("throwing");
    std::atomic<int> calls{0};
    for (const Affine& f : {A, B, C}) {
      const ActionRoutine inner = affine_routine(f, nullptr);
      const bool throws = f.name == failing;
      b.add(ActionRoutine(f.name, [inner, throws, &calls](const ActionContext& ctx, DataItem& item) {
        if (throws && calls.fetch_add(1) == 5) throw std::runtime_error("boom on " + item.describe());
        inner(ctx, item);
      }));
    }
    CHECK_THROWS_WITH_AS(rt.execute(b, configurations::get("big_example"), grid), doctest::Contains("boom on"), Error);
    CHECK(rt.pinned_pool().outstanding_bytes() == 0);
    CHECK(rt.device_pool().outstanding_bytes() == 0);
    for (unsigned i = 0; i < rt.options().n_teams; ++i) CHECK(rt.team(i).mode() == TeamMode::Idle);
    for (unsigned i = 0; i < rt.options().n_helpers; ++i) CHECK(rt.helper_team(i).mode() == TeamMode::Idle);
  }
  const SplitRun got = run_split(rt, configurations::get("big_example"), "to_b_gpu", "b_cpu", spec({2, 2, 1}));
  CHECK(got.first + got.rest == 4 * 8);
}

TEST_CASE("Router: a recorded big_example cycle replays in the recorded order, the router making the same choices") {
  Runtime rt;
  Recorder recorder;
  rt.set_recorder(&recorder);
  Grid grid(spec({3, 2, 1}));
  fill_pattern(grid);
  Grid replayed = grid.clone();
  rt.execute(bundle_of({A, B, C}, nullptr), configurations::get("big_example"), grid);
  rt.set_recorder(nullptr);
  const Recording rec = Recording::from_json(recorder.recording().to_json());
  CHECK(rec.pushes.size() == 6 * 8);  // the distributor's tiles only; the router's are not pushes
  const Recording again = replay(rec, bundle_of({A, B, C}, nullptr), replayed, rt);
  REQUIRE(again.tasks.size() == rec.tasks.size());
  for (std::size_t i = 0; i < rec.tasks.size(); ++i) {
    CHECK(again.tasks[i].node == rec.tasks[i].node);
    CHECK(again.tasks[i].item == rec.tasks[i].item);
  }
  CHECK(replayed.max_interior_difference(grid) == 0.0);
  CHECK(rt.pinned_pool().outstanding_bytes() == 0);
  CHECK(rt.device_pool().outstanding_bytes() == 0);
}

TEST_CASE("Router: JSON round-trips its fraction, subscribers and unit; other helpers may not carry them") {
  const auto c = host_tile_split(0.3, 1);
  const auto again = Configuration::from_json(c.to_json());
  REQUIRE(again.helpers.size() == 1);
  CHECK(again.helpers[0].kind == HelperKind::router);
  CHECK(again.helpers[0].fraction == 0.3);
  CHECK(again.helpers[0].to == std::vector<std::string>{"b_first", "b_rest"});
  CHECK(again.helpers[0].unit == RoutingUnit::tile);
  CHECK(again.to_json() == c.to_json());
  CHECK(configurations::get("cpu_gpu_data_parallel").to_json().find("\"fraction\"") == std::string::npos);
}

TEST_CASE("Router: a bad fraction or missing subscribers in JSON is an error naming the helper's field and the fix") {
  auto helper = [](const std::string& fields) {
    return R"({"name": "x", "teams": [{"name": "t", "type": "tile", "action": "A"}], "helpers": [{"name": "r", )" +
           fields + R"(}], "distributor": {"kind": "action_parallel", "groups": [{"pipelines": ["t"]}]}})";
  };
  auto bad = [](const std::string& text, const char* fragment) {
    CAPTURE(fragment);
    CHECK_THROWS_WITH_AS(Configuration::from_json(text), doctest::Contains(fragment), Error);
  };
  const std::string router = R"("kind": "router", "input": "tile", )";
  bad(helper(router + R"("fraction": 1.5, "to": ["a", "b"])"),
      "field helpers[0].fraction: expected a number from 0 to 1");
  bad(helper(router + R"("fraction": -0.1, "to": ["a", "b"])"), "field helpers[0].fraction");
  bad(helper(router + R"("fraction": "half", "to": ["a", "b"])"), "field helpers[0].fraction");
  bad(helper(router + R"("to": ["a", "b"])"), "field helpers[0].fraction: missing");
  bad(helper(router + R"("fraction": 0.5)"), "field helpers[0].to: missing");
  bad(helper(router + R"("fraction": 0.5, "to": ["a"])"), "field helpers[0].to: a router names two subscribers");
  bad(helper(router + R"("fraction": 0.5, "to": ["a", 3])"), "field helpers[0].to[1]: expected a team or helper name");
  bad(helper(router + R"("fraction": 0.5, "to": ["a", "b"], "unit": "cell")"), "field helpers[0].unit");
  bad(helper(R"("kind": "mover", "input": "packet_of_blocks", "fraction": 0.5)"),
      "field helpers[0].fraction: only a router helper takes this field");
  bad(helper(R"("kind": "splitter", "input": "block", "output": "tile", "to": ["a", "b"])"),
      "field helpers[0].to: only a router");
}

TEST_CASE(
    "Router: validation names the router and the fix for a bad fraction, subscribers, types, a work edge out "
    "and single tiles routed to an aggregator") {
  auto invalid = [](const Configuration& c, const char* fragment) {
    CAPTURE(fragment);
    CHECK_THROWS_WITH_AS(validate(c, RuntimeShape{6, 4, 6, 2}), doctest::Contains(fragment), Error);
  };
  const auto big = configurations::get("big_example");
  CHECK_NOTHROW(validate(big, RuntimeShape{6, 4, 6, 2}));
  CHECK_NOTHROW(validate(host_tile_split(0.5, 2), RuntimeShape{6, 4, 6, 2}));
  {
    auto c = big;
    c.helpers[0].fraction = 2.0;
    invalid(c, "helper 'split_b' (router) has fraction 2");
  }
  {
    auto c = big;
    c.helpers[0].to = {"b_cpu"};
    invalid(c, "helper 'split_b' (router) names 1 subscribers in its to: name two");
  }
  {
    auto c = big;
    c.helpers[0].to = {"b_cpu", "b_cpu"};
    invalid(c, "names 'b_cpu' twice");
  }
  {
    auto c = big;
    c.helpers[0].to[1] = "nowhere";
    invalid(c, "router edge 'split_b' -> 'nowhere' (field to[1]) ends at unknown node 'nowhere'");
  }
  {
    auto c = big;
    c.helpers[0].to[0] = "b_gpu";  // packets, not tiles
    invalid(c,
            "router edge 'split_b' -> 'b_gpu' (field to[0]): the router gives tile but 'b_gpu' takes packet_of_blocks");
  }
  {
    auto c = big;
    c.work.push_back({"split_b", "b_cpu"});
    invalid(c, "helper 'split_b' is a router and hands its items to the two nodes of its to");
  }
  {
    auto c = big;
    c.helpers[0].unit = RoutingUnit::tile;
    invalid(c, "may receive incomplete blocks: a distributor group or router upstream routes single tiles");
  }
  {
    auto c = big;
    c.helpers[0].output = DataType::block;
    invalid(c, "helper 'split_b' (router) cannot take tile and give block");
  }
  {
    auto c = host_tile_split(0.5, 1);
    c.helpers[0].to[1] = "a";  // back to the start: a cycle through the router
    c.distributor.groups.push_back({{"b_rest"}, DistributionPolicy::fixed_fraction, {}, RoutingUnit::block});
    invalid(c, "closes a cycle of work edges");
  }
}

}  // namespace test_router
