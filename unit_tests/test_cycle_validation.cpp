// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A Runtime validates a configuration and bundle once and skips that for the same pair in later
// cycles; any change to either (the same objects edited, or others) is validated again.
#include <korch/bundle.hpp>
#include <korch/configuration.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/grid.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <atomic>

using namespace korch;

namespace {

GridSpec small_grid() {
  GridSpec spec;
  spec.block_cells = {8, 8, 8};
  spec.blocks = {2, 2, 1};
  spec.n_vars = 3;
  return spec;
}

Bundle counting(const char* name, std::atomic<int>& calls) {
  Bundle b(name);
  b.add(ActionRoutine("A", [&calls](const ActionContext&, DataItem&) { ++calls; }));
  return b;
}

ActionRoutine writing(const char* action, const char* variable) {
  ActionDeclaration d;
  d.action = action;
  d.writes = {variable};
  return ActionRoutine(action, [](const ActionContext&, DataItem&) {}).declared(d);
}

}  // namespace

TEST_CASE("Cycle validation: the same pair runs again; an edited configuration or bundle is validated again") {
  Runtime rt(RuntimeOptions{2, 2, 2, 1, {}, 0, 0});
  Grid grid(small_grid());
  std::atomic<int> calls{0};
  Bundle bundle = counting("b", calls);
  Configuration c = configurations::get("cpu_only");
  rt.execute(bundle, c, grid);
  rt.execute(bundle, c, grid);
  CHECK(calls == 2 * grid.n_blocks());
  c.teams[0].initial_threads = 3;  // more than the runtime's teams have
  CHECK_THROWS_WITH_AS(rt.execute(bundle, c, grid), doctest::Contains("starts with 3 threads"), Error);
  c.teams[0].initial_threads = 2;
  rt.execute(bundle, c, grid);
  c.teams[0].action = "B";  // the bundle has no B
  CHECK_THROWS_WITH_AS(rt.execute(bundle, c, grid), doctest::Contains("does not have"), Error);
  c.teams[0].action = "A";
  c.distributor.groups[0].pipelines[0] = "nowhere";
  CHECK_THROWS_AS(rt.execute(bundle, c, grid), Error);
  c = configurations::get("cpu_only");
  rt.execute(bundle, c, grid);
  Bundle other("b");  // same name, another routine
  other.add(ActionRoutine("Z", [](const ActionContext&, DataItem&) {}));
  CHECK_THROWS_WITH_AS(rt.execute(other, c, grid), doctest::Contains("does not have"), Error);
  bundle.add(ActionRoutine("B", [](const ActionContext&, DataItem&) {}));
  bundle.add(ActionRoutine("C", [](const ActionContext&, DataItem&) {}));  // 3 routines, 2 teams
  CHECK_THROWS_WITH_AS(rt.execute(bundle, c, grid), doctest::Contains("more teams"), Error);
}

TEST_CASE("Cycle validation: a redeclared routine is checked again across action-parallel pipelines") {
  Runtime rt(RuntimeOptions{2, 2, 2, 1, {}, 0, 0});
  Grid grid(small_grid());
  Configuration c = Configuration::from_json(R"({"name": "two",
    "teams": [ {"name": "left", "type": "tile", "action": "A", "threads": 1},
               {"name": "right", "type": "tile", "action": "B", "threads": 1} ],
    "distributor": {"kind": "action_parallel", "groups": [ {"pipelines": ["left"]}, {"pipelines": ["right"]} ]}})");
  Bundle apart("p");
  apart.add(writing("A", "u"));
  apart.add(writing("B", "v"));
  rt.execute(apart, c, grid);
  rt.execute(apart, c, grid);
  Bundle clash("p");  // same names, B now writes what A writes
  clash.add(writing("A", "u"));
  clash.add(writing("B", "u"));
  CHECK_THROWS_WITH_AS(rt.execute(clash, c, grid), doctest::Contains("both write"), Error);
}
