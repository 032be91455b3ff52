// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stage-by-stage placement (docs/planner.md, "Cost model" and "Configurations"): a pipeline whose
// actions must run on different sides is planned host stages, then a split, then device stages;
// a split in the middle becomes a router, and host items reach device teams through an aggregator
// to action metadata.
#include "test_error_support.hpp"
#include "test_plan_support.hpp"

#include <korch/action_metadata.hpp>
#include <korch/aggregator.hpp>
#include <korch/backend/memory_pool.hpp>
#include <korch/plan/cost_model.hpp>
#include <korch/plan/kernel_graph.hpp>
#include <korch/plan/scheduler.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cmath>

using namespace korch;
using namespace korch::test;

namespace {

ActionDeclaration action(const std::string& name) {
  ActionDeclaration a;
  a.action = name;
  return a;
}

plan::SchedulerOptions options() {
  plan::SchedulerOptions o;
  o.shape = RuntimeShape{6, 2, 6, 1};
  return o;
}

const HelperConfig* helper_of_kind(const Configuration& c, HelperKind kind) {
  for (const auto& h : c.helpers)
    if (h.kind == kind) return &h;
  return nullptr;
}

}  // namespace

TEST_CASE(
    "CostModel: host_only then device_only actions are placed host, split, device; device_only before host_only cannot "
    "be") {
  const plan::CostModel model;
  ActionDeclaration a = action("A"), b = action("B"), c = action("C");
  a.hints.host_only = true;
  b.hints.host_cost = 1.5;
  b.hints.device_cost = 1;
  c.hints.device_only = true;
  const auto p = model.place({&a, &b, &c});
  REQUIRE(p);
  CHECK(p->actions ==
        std::vector<plan::Placement>{plan::Placement::host, plan::Placement::split, plan::Placement::device});
  CHECK(p->placement == plan::Placement::split);
  CHECK(p->host_weight == doctest::Approx(1 / 1.5));  // the split's shares: B's speeds
  CHECK(p->device_weight == doctest::Approx(1.0));
  CHECK_FALSE(model.place({&c, &b, &a}));
  // Without B both sides are used and nothing is split.
  const auto two = model.place({&a, &c});
  REQUIRE(two);
  CHECK(two->actions == std::vector<plan::Placement>{plan::Placement::host, plan::Placement::device});
  CHECK(two->host_weight == 1.0);
  CHECK(two->device_weight == 0.0);
}

TEST_CASE("CostModel: a pipeline that fits one side stays whole unless changing sides is clearly cheaper") {
  const plan::CostModel model;
  // Short then heavy: host then device would save a little (1.3 against 1.5), not enough to change sides.
  ActionDeclaration s = action("S"), h = action("H");
  s.hints.short_running = true;
  h.hints.heavy = true;
  const auto whole = model.place({&s, &h});
  REQUIRE(whole);
  CHECK(whole->placement == plan::Placement::device);
  CHECK(whole->actions == std::vector<plan::Placement>{plan::Placement::device, plan::Placement::device});
  // Host only then heavy: all on the host costs 11 per item, moving the heavy action 2.2.
  ActionDeclaration o = action("O");
  o.hints.host_only = true;
  const auto moved = model.place({&o, &h});
  REQUIRE(moved);
  CHECK(moved->actions == std::vector<plan::Placement>{plan::Placement::host, plan::Placement::device});
  // A dear change of side keeps it on the host.
  plan::CostModel dear = model;
  dear.side_change = 5;
  CHECK(dear.place({&o, &h})->placement == plan::Placement::host);
}

TEST_CASE(
    "Scheduler: host A, neutral B, device C make one pipeline with a router splitting B between host and device") {
  const auto op = plan::Operation::from_json(sided_example);
  const plan::Plan p = plan::Scheduler(options()).plan(plan::KernelGraph(op));
  REQUIRE(p.bundles().size() == 1);
  const plan::PlannedBundle& b = *p.bundles()[0];
  REQUIRE(b.pipelines.size() == 1);
  const plan::PlannedPipeline& q = b.pipelines[0];
  REQUIRE(q.stages.size() == 3);
  CHECK(q.stages[0].placement == plan::Placement::host);
  CHECK(q.stages[1].placement == plan::Placement::split);
  CHECK(q.stages[2].placement == plan::Placement::device);
  CHECK(q.host_teams == std::vector<std::string>{"p0_s0_host", "p0_s1_host", ""});
  CHECK(q.device_teams == std::vector<std::string>{"", "p0_s1_device", "p0_s2_device"});
  const Configuration& c = b.configuration;
  CHECK(c.distributor.kind == DistributorKind::action_parallel);
  CHECK(c.distributor.groups[0].pipelines == std::vector<std::string>{"p0_s0_host"});
  const HelperConfig* router = helper_of_kind(c, HelperKind::router);
  REQUIRE(router);
  CHECK(router->to[0] == "p0_s1_host");
  CHECK(router->fraction == doctest::Approx(0.4));  // 1/1.5 against 1/1
  // Both branches rejoin at C: the host one through an aggregator to action metadata.
  int into_c = 0;
  for (const auto& e : c.work) into_c += e.to == "p0_s2_device" ? 1 : 0;
  CHECK(into_c == 2);
  CHECK(c.helpers.size() == 3);  // the router and two aggregators
  validate(c, options().shape);
  // The plan file and its drawing keep the stages' sides and the router.
  const std::string text = p.to_json();
  CHECK(contains(text, "\"stage_placements\""));
  CHECK(plan::Plan::from_json(text).to_json() == text);
  CHECK(plan::Plan::from_json(text).bundles()[0]->pipelines[0].stages[1].placement == plan::Placement::split);
  CHECK(contains(plan::configuration_dot(c), "\"p0_s1_router\" [shape=diamond"));
}

TEST_CASE("Running a mid-pipeline split: each action once per cell, in order, and the router's shares as planned") {
  const auto op = plan::Operation::from_json(sided_example);
  const plan::Plan p = plan::Scheduler(options()).plan(plan::KernelGraph(op));
  Grid grid(plan_grid_spec(3));
  const int cells = CellStamps::cells;
  CellStamps stamps(grid, 3);
  Runtime runtime(RuntimeOptions{6, 2, 6, 1, {}, 0, 0});
  plan::Executor(op, stamps.bodies(3), {}).run(p, runtime, grid);
  CHECK(stamps.repeats() == 0);
  auto at = [&](int a, int b, int cell) { return stamps.at(a, b, cell); };
  CHECK(stamps.missing() == 0);
  int out_of_order = 0;
  for (int b = 0; b < grid.n_blocks(); ++b)
    for (int cell = 0; cell < cells; ++cell) {
      out_of_order += at(0, b, cell) > at(1, b, cell) || at(1, b, cell) > at(2, b, cell) ? 1 : 0;
    }
  CHECK(out_of_order == 0);
  // The router sends floor(n * fraction) blocks to the host branch: 3 of 8 at the planned 0.4.
  std::map<std::string, std::size_t> processed;
  for (const auto& r : runtime.last_reports()) processed[r.node] = r.cycle.processed;
  const HelperConfig* router = helper_of_kind(p.bundles()[0]->configuration, HelperKind::router);
  REQUIRE(router);
  const auto host_blocks = static_cast<std::size_t>(std::floor(grid.n_blocks() * router->fraction));
  CHECK(host_blocks == 3);
  CHECK(processed.at("p0_s1_host") == host_blocks * static_cast<std::size_t>(grid.tiles_per_block()));
  CHECK(processed.at("p0_s1_device") == static_cast<std::size_t>(grid.n_blocks()) - host_blocks);
  CHECK(processed.at("p0_s2_device") == static_cast<std::size_t>(grid.n_blocks()));
  CHECK(processed.at("p0_s0_host") == static_cast<std::size_t>(grid.n_blocks() * grid.tiles_per_block()));
}

TEST_CASE(
    "A split at a pipeline's start followed by device stages: the distributor shares the blocks, both chains rejoin") {
  const auto op = plan::Operation::from_json(R"({"name": "split_first", "variables": ["a", "b", "c"],
    "steps": [
      {"action": {"name": "A", "writes": ["a"], "hints": {"cost": {"host": 1, "device": 1}}}},
      {"action": {"name": "B", "reads": ["a"], "writes": ["b"], "hints": {"device_only": true}}}]})");
  plan::SchedulerOptions o = options();
  o.cost.clear_win = 1.2;  // parts need win by only a fifth: 1.4 per item against 1.7 all on a device
  const plan::Plan p = plan::Scheduler(o).plan(plan::KernelGraph(op));
  REQUIRE(p.bundles().size() == 1);
  const plan::PlannedBundle& b = *p.bundles()[0];
  REQUIRE(b.pipelines.size() == 1);
  REQUIRE(b.pipelines[0].stages.size() == 2);
  CHECK(b.pipelines[0].stages[0].placement == plan::Placement::split);
  CHECK(b.pipelines[0].stages[1].placement == plan::Placement::device);
  CHECK(b.configuration.distributor.kind == DistributorKind::data_parallel);
  CHECK(b.configuration.distributor.groups[0].pipelines == std::vector<std::string>{"p0_s0_host", "p0_s0_device"});
  CHECK_FALSE(helper_of_kind(b.configuration, HelperKind::router));
  Grid grid(plan_grid_spec(3));
  CellStamps stamps(grid, 2);
  Runtime runtime(RuntimeOptions{6, 2, 6, 1, {}, 0, 0});
  plan::Executor(op, stamps.bodies(2), {}).run(p, runtime, grid);
  CHECK(stamps.repeats() == 0);
  int missing = 0, out_of_order = 0;
  for (int blk = 0; blk < grid.n_blocks(); ++blk)
    for (int cell = 0; cell < CellStamps::cells; ++cell) {
      missing += stamps.at(0, blk, cell) == 0 || stamps.at(1, blk, cell) == 0 ? 1 : 0;
      out_of_order += stamps.at(0, blk, cell) > stamps.at(1, blk, cell) ? 1 : 0;
    }
  CHECK(missing == 0);
  CHECK(out_of_order == 0);
  std::map<std::string, std::size_t> processed;
  for (const auto& r : runtime.last_reports()) processed[r.node] = r.cycle.processed;
  const auto tiles = static_cast<std::size_t>(grid.tiles_per_block());
  CHECK(processed.at("p0_s0_host") % tiles == 0);
  CHECK(processed.at("p0_s0_host") / tiles + processed.at("p0_s0_device") == static_cast<std::size_t>(grid.n_blocks()));
  CHECK(processed.at("p0_s0_device") > 0);
  CHECK(processed.at("p0_s1_device") == static_cast<std::size_t>(grid.n_blocks()));
}

TEST_CASE("Team limits count both teams of a split stage and its helpers; too few of either gives up the split") {
  const auto op = plan::Operation::from_json(sided_example);
  plan::SchedulerOptions few_teams = options();
  few_teams.shape.n_teams = 3;
  const plan::Plan p = plan::Scheduler(few_teams).plan(plan::KernelGraph(op));
  for (const auto* b : p.bundles()) {
    CHECK(b->configuration.teams.size() <= 3);
    CHECK(b->configuration.helpers.size() <= few_teams.shape.n_helpers);
    CHECK_FALSE(helper_of_kind(b->configuration, HelperKind::router));
    validate(b->configuration, few_teams.shape);
  }
  plan::SchedulerOptions few_helpers = options();
  few_helpers.shape.n_helpers = 1;
  const plan::Plan q = plan::Scheduler(few_helpers).plan(plan::KernelGraph(op));
  for (const auto* b : q.bundles()) {
    CHECK(b->configuration.helpers.size() <= 1);
    validate(b->configuration, few_helpers.shape);
  }
}

TEST_CASE("Aggregator to action metadata: one item per complete block; blocks map one to one; bad pairs are refused") {
  Grid grid(plan_grid_spec(1));
  MemoryPool pinned("pinned", PoolMemory::pinned_host), device("device", PoolMemory::device);
  Aggregator tiles("to_device", grid, DataType::tile, DataType::action_metadata, 1, {}, pinned, device);
  std::size_t emitted = 0;
  for (int t = 0; t < grid.tiles_per_block(); ++t) {
    const auto out = tiles.add(Tile(grid, 3, t));
    emitted += out.size();
    if (t + 1 < grid.tiles_per_block()) {
      CHECK(out.empty());
    } else {
      REQUIRE(out.size() == 1);
      auto* m = dynamic_cast<ActionMetadata*>(out[0].get());
      REQUIRE(m);
      CHECK(m->block_id() == 3);
    }
  }
  CHECK(emitted == 1);
  CHECK(tiles.flush().empty());
  Aggregator blocks("to_device", grid, DataType::block, DataType::action_metadata, 1, {}, pinned, device);
  const auto out = blocks.add(Block(grid, 5));
  REQUIRE(out.size() == 1);
  CHECK(dynamic_cast<ActionMetadata&>(*out[0]).block_id() == 5);
  // In a configuration: an aggregator_mover cannot make action metadata.
  Configuration c = Configuration::from_json(R"({"name": "m", "teams": [
      {"name": "h", "type": "tile", "action": "H"}, {"name": "d", "type": "action_metadata", "action": "D"}],
    "helpers": [{"name": "to_d", "kind": "aggregator", "input": "tile", "output": "action_metadata"}],
    "work": [{"from": "h", "to": "to_d"}, {"from": "to_d", "to": "d"}],
    "distributor": {"kind": "action_parallel", "groups": [{"pipelines": ["h"]}]}})");
  validate(c, RuntimeShape{2, 1, 1, 1});
  c.helpers[0].kind = HelperKind::aggregator_mover;
  CHECK(contains(error_of([&] { validate(c, RuntimeShape{2, 1, 1, 1}); }), "to_d"));
}
