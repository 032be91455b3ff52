// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam: exceptions in action routines, errors that name the team and its state, and the
// action context with its thread spaces.
#include "test_error_support.hpp"
#include "test_thread_team_support.hpp"

#include <korch/error.hpp>
#include <korch/thread_team.hpp>

#include <Kokkos_Core.hpp>
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace korch;
using namespace korch::test;

// ---------------------------------------------------------------------------------------------
// Exceptions in action routines

TEST_CASE("An exception in an action routine drains the cycle, returns the team to Idle and is rethrown by wait()") {
  ThreadTeam team("physics", 2);
  ThreadTeam down("downstream", 1);
  team.attach_work_subscriber(down);
  std::atomic<int> down_calls{0};
  const ActionRoutine flaky("hydro_sweep", [](const ActionContext&, DataItem& it) {
    if (static_cast<CountedItem&>(it).id == 3) throw std::runtime_error("negative density");
  });
  down.start_cycle(counting_routine(down_calls), 1);
  team.start_cycle(flaky, 1);  // one thread: items after #3 are all skipped
  for (int i = 0; i < 10; ++i) team.enqueue(item(i));
  team.close_queue();
  std::string msg;
  bool nested_cause = false;
  try {
    watched_wait(team);
  } catch (const Error& e) {
    msg = e.what();
    try {
      std::rethrow_if_nested(e);
    } catch (const std::runtime_error& cause) {
      nested_cause = std::string(cause.what()) == "negative density";
    }
  }
  CHECK(contains(msg, "team 'physics'"));
  CHECK(contains(msg, "action routine 'hydro_sweep'"));
  CHECK(contains(msg, "item #3"));
  CHECK(contains(msg, "negative density"));
  CHECK(nested_cause);
  const CycleReport r = team.last_cycle();
  CHECK(r.enqueued == 10);
  CHECK(r.processed == 3);
  CHECK(r.failed == 1);
  CHECK(r.skipped == 6);
  CHECK(r.processed + r.failed + r.skipped == r.enqueued);
  CHECK(r.forwarded == 3);
  // The subscriber was closed, so it does not hang, and got only the processed items.
  watched_wait(down);
  CHECK(down_calls == 3);
  // The team is Idle and reusable; the error was collected once.
  CHECK(team.mode() == TeamMode::Idle);
  watched_wait(team);
  std::atomic<int> calls{0};
  down.start_cycle(noop_routine(), 1);
  team.start_cycle(counting_routine(calls), 2);
  for (int i = 0; i < 5; ++i) team.enqueue(item(i));
  team.close_queue();
  watched_wait(team);
  watched_wait(down);
  CHECK(calls == 5);
}

TEST_CASE("A failed cycle whose error was not collected blocks the next start_cycle") {
  ThreadTeam team("uncollected", 1);
  const ActionRoutine bad("bad", [](const ActionContext&, DataItem&) { throw std::logic_error("boom"); });
  team.start_cycle(bad, 1);
  team.enqueue(item(0));
  team.close_queue();
  REQUIRE(eventually([&] { return team.mode() == TeamMode::Idle; }));
  const std::string msg = error_of([&] { team.start_cycle(noop_routine(), 1); });
  CHECK(contains(msg, "call wait()"));
  CHECK(contains(msg, "boom"));
  CHECK_THROWS_AS(watched_wait(team), Error);
  team.start_cycle(noop_routine(), 1);
  team.close_queue();
  watched_wait(team);
}

TEST_CASE("Errors name the team and its state: empty routine, start while running, close in Idle") {
  ThreadTeam team("named", 1);
  CHECK(contains(error_of([&] { team.start_cycle(ActionRoutine("nothing", nullptr), 1); }),
                 "empty action routine 'nothing'"));
  Gate gate;
  team.start_cycle(gated_routine(gate), 1);
  const std::string msg = error_of([&] { team.start_cycle(noop_routine(), 1); });
  CHECK(contains(msg, "'named' is RunningOpen"));
  CHECK(contains(msg, "call wait()"));
  team.close_queue();
  gate.open();
  watched_wait(team);
}

// ---------------------------------------------------------------------------------------------
// Action context and thread spaces

struct Dt {
  double value;
};

TEST_CASE("The action context gives team id and name, thread index, cycle, parameters and the thread's spaces") {
  ThreadTeam team("ctx", 2);
  std::mutex m;
  std::set<unsigned> indices;
  std::vector<std::string> problems;
  const ActionRoutine inspect("inspect", [&](const ActionContext& ctx, DataItem&) {
    std::lock_guard<std::mutex> lk(m);
    indices.insert(ctx.thread_index());
    if (ctx.team_name() != "ctx") problems.push_back("team name");
    if (ctx.team_id() != team.id()) problems.push_back("team id");
    if (ctx.cycle() != 1) problems.push_back("cycle");
    if (ctx.parameters_as<Dt>().value != 0.25) problems.push_back("parameters");
    if (ctx.thread_index() >= 2) problems.push_back("thread index");
  });
  team.start_cycle(inspect, 2, ActionParameters(Dt{0.25}));
  for (int i = 0; i < 100; ++i) team.enqueue(item(i));
  team.close_queue();
  watched_wait(team);
  CHECK(problems.empty());
  CHECK_FALSE(indices.empty());
}

TEST_CASE("Action parameters of the wrong type throw a korch::Error naming both types") {
  const ActionParameters p(Dt{1.0});
  CHECK(p.holds<Dt>());
  CHECK(p.get<Dt>().value == 1.0);
  const std::string msg = error_of([&] { (void)p.get<int>(); });
  CHECK(contains(msg, "Dt"));
  CHECK(contains(msg, "int"));
  const ActionParameters none;
  CHECK_FALSE(none.has_value());
  CHECK(contains(error_of([&] { (void)none.get<Dt>(); }), "nothing"));
  // Inside a cycle the error fails the cycle and names the routine.
  ThreadTeam team("typed", 1);
  team.start_cycle(
      ActionRoutine("reads_int", [](const ActionContext& ctx, DataItem&) { (void)ctx.parameters_as<int>(); }), 1,
      ActionParameters(Dt{2.0}));
  team.enqueue(item(0));
  team.close_queue();
  const std::string in_cycle = error_of([&] { watched_wait(team); });
  CHECK(contains(in_cycle, "reads_int"));
  CHECK(contains(in_cycle, "Dt"));
}

TEST_CASE("Each team thread runs Kokkos RangePolicy kernels on its own Serial instance, concurrently") {
  ThreadTeam team("kokkos", 2);
  std::atomic<int> wrong{0};
  const ActionRoutine kernel("axpy", [&](const ActionContext& ctx, DataItem&) {
    const int n = 1000;
    // Allocated and initialized on the thread's own Serial instance, not the default host space.
    Kokkos::View<double*, Kokkos::HostSpace> x(Kokkos::view_alloc(ctx.host_space(), std::string("x")), n);
    Kokkos::parallel_for(Kokkos::RangePolicy<HostTaskSpace>(ctx.host_space(), 0, n), [=](int i) { x(i) = 2.0 * i; });
    ctx.host_space().fence();
    for (int i = 0; i < n; ++i) {
      if (x(i) != 2.0 * i) {
        ++wrong;
        break;
      }
    }
  });
  team.start_cycle(kernel, 2);
  for (int i = 0; i < 64; ++i) team.enqueue(item(i));
  team.close_queue();
  watched_wait(team);
  CHECK(wrong == 0);
  CHECK(team.last_cycle().processed == 64);
}

TEST_CASE("DataItem::describe names the type by default") {
  struct Plain : DataItem {};
  const Plain p;
  CHECK(contains(p.describe(), "Plain"));
  CHECK(item(5)->describe() == "item #5");
}

TEST_CASE("The snapshot reports the running cycle and last_cycle the finished one") {
  ThreadTeam team("report", 1);
  Gate gate;
  team.start_cycle(gated_routine(gate, "held"), 1);
  team.enqueue(item(0));
  team.enqueue(item(1));
  REQUIRE(gate.wait_inside(1));
  TeamSnapshot s = team.snapshot();
  check_snapshot(s);
  CHECK(s.cycle.cycle == 1);
  CHECK(s.cycle.routine == "held");
  CHECK(s.cycle.enqueued == 2);
  CHECK(s.n_computing == 1);
  CHECK(s.n_queued == 1);
  CHECK(team.last_cycle().cycle == 0);
  gate.open();
  team.close_queue();
  watched_wait(team);
  CHECK(team.last_cycle().cycle == 1);
  CHECK(team.last_cycle().processed == 2);
}
