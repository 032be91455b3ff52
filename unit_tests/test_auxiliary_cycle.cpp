// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Auxiliary cycles: a routine run once without items on a chosen team, its device work complete
// when the call returns, its failures and its trace span like those of any cycle.
#include "test_error_support.hpp"
#include "test_runtime_support.hpp"

#include <korch/configurations/builtin.hpp>
#include <korch/runtime.hpp>
#include <korch/trace.hpp>

#include <stdexcept>
#include <string>
#include <thread>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_auxiliary_cycle {

using namespace korch;
using namespace korch::test;

namespace {

using DeviceTable = Kokkos::View<double*, DeviceMemSpace>;

// Fills the table on the thread's device instance and does not fence: run_auxiliary must.
void fill_table(const DeviceTaskSpace& space, DeviceTable table, double scale) {
  Kokkos::parallel_for(
      "korch test fill table", Kokkos::RangePolicy<DeviceTaskSpace>(space, 0, static_cast<int>(table.extent(0))),
      KOKKOS_LAMBDA(int i) { table(i) = scale * i; });
}

GridSpec spec() {
  GridSpec s;
  s.block_cells = {8, 8, 4};
  s.blocks = {2, 1, 1};
  s.guard = 1;
  s.n_vars = 3;
  return s;
}

}  // namespace

TEST_CASE(
    "Auxiliary cycle: the routine runs once on a thread of the chosen team, and its device work is complete "
    "when the call returns") {
  Runtime rt({.n_teams = 3, .threads_per_team = 2});
  DeviceTable table("korch test table", 1000);
  int calls = 0;
  std::string team;
  std::thread::id thread;
  rt.run_auxiliary(AuxiliaryRoutine("fill table",
                                    [&](const ActionContext& ctx) {
                                      ++calls;
                                      team = ctx.team_name();
                                      thread = std::this_thread::get_id();
                                      fill_table(ctx.device_space(), table, ctx.parameters_as<double>());
                                    }),
                   AuxiliaryPlacement{2, AuxiliarySpace::device}, ActionParameters(0.5));
  CHECK(calls == 1);
  CHECK(team == "team 3");
  CHECK(thread != std::this_thread::get_id());
  const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), table);
  CHECK(host(999) == 0.5 * 999);
  CHECK(host(1) == 0.5);
}

TEST_CASE(
    "Auxiliary cycle: a throwing routine reaches the caller as a korch::Error naming the routine and the team, "
    "and the runtime runs the next cycle") {
  Runtime rt({.n_teams = 2, .threads_per_team = 2});
  const AuxiliaryRoutine failing("load constants", [](const ActionContext&) { throw std::runtime_error("no table"); });
  const std::string message = error_of([&] { rt.run_auxiliary(failing, AuxiliaryPlacement{1}); });
  CHECK(contains(message, "auxiliary routine 'load constants' on 'team 2' failed"));
  CHECK(contains(message, "no table"));
  CHECK_THROWS_AS(rt.run_auxiliary(failing), Error);
  int ran = 0;
  rt.run_auxiliary(AuxiliaryRoutine("after", [&](const ActionContext&) { ++ran; }), AuxiliaryPlacement{1});
  CHECK(ran == 1);
  Grid g(spec());
  fill_pattern(g);
  Bundle bundle("after the failure");
  bundle.add(affine_routine(Affine{"A", 0, 0, 2.0, 0.0, 1.0}, nullptr));
  CHECK_NOTHROW(rt.execute(bundle, configurations::get("cpu_only"), g));
}

TEST_CASE("Auxiliary cycle: an attached trace shows the routine as a task of its team") {
  Runtime rt({.n_teams = 2, .threads_per_team = 1});
  Trace trace;
  rt.set_trace(&trace);
  rt.run_auxiliary(AuxiliaryRoutine("geometry", [](const ActionContext&) {}),
                   AuxiliaryPlacement{0, AuxiliarySpace::host});
  rt.set_trace(nullptr);
  const auto events = trace.events();
  REQUIRE(events.size() == 1);
  CHECK(events[0].name == "geometry");
  CHECK(events[0].category == "task");
  CHECK(events[0].team == "team 1");
  CHECK(events[0].item == "auxiliary call of 'geometry'");
}

TEST_CASE("Auxiliary cycle: a missing team, an unnamed or empty routine and a call from a team thread are refused") {
  Runtime rt({.n_teams = 2, .threads_per_team = 1});
  const AuxiliaryRoutine nothing("nothing", [](const ActionContext&) {});
  CHECK_THROWS_WITH_AS(rt.run_auxiliary(nothing, AuxiliaryPlacement{2}),
                       doctest::Contains("run_auxiliary('nothing') on team index 2: there are 2 teams"), Error);
  CHECK_THROWS_WITH_AS(rt.run_auxiliary(AuxiliaryRoutine("", [](const ActionContext&) {})),
                       doctest::Contains("has no name"), Error);
  CHECK_THROWS_WITH_AS(rt.run_auxiliary(AuxiliaryRoutine("empty", {})), doctest::Contains("the routine is empty"),
                       Error);
  const AuxiliaryRoutine nested("nested", [&](const ActionContext&) { rt.run_auxiliary(nothing); });
  const std::string message = error_of([&] { rt.run_auxiliary(nested); });
  CHECK(contains(message, "run_auxiliary('nothing') called from a thread of team 'team 1'"));
}

}  // namespace test_auxiliary_cycle
