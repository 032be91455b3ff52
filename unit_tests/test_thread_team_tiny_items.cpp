// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam with tiny items (docs/thread-team.md, "Tiny items"): after a timed cycle whose items
// took less than detail::tiny_item_time each, a team thread leaves the next cycle's activation to
// the caller, which runs the items alone in wait(). Leaving it must never keep items from running
// when no caller comes to wait().
#include "thread_team_internals.hpp"

#include "test_thread_team_support.hpp"

#include <korch/thread_team.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

using namespace korch;
using namespace korch::test;

namespace {

constexpr int items_per_cycle = 100;

// Counts the items run on the thread that built it (the caller) and on any other.
struct WhoRuns {
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> by_caller{0};
  std::atomic<int> by_others{0};
  ActionRoutine routine() {
    return ActionRoutine("who runs", [this](const ActionContext&, DataItem&) {
      (std::this_thread::get_id() == caller ? by_caller : by_others).fetch_add(1, std::memory_order_relaxed);
    });
  }
};

// The default poll window (TeamOptions::spin): back to back, the cycles find the thread polling,
// so it receives each activation itself, and leaves it to the caller for that long.
std::unique_ptr<ThreadTeam> polling_team() { return std::make_unique<ThreadTeam>("tiny items", 1); }

// The team's first cycle is timed. Returns whether its items were well within tiny on this machine,
// so that the later timed cycles find them tiny too (a sanitizer build or a heavily loaded machine
// may make 100 no-op items take longer).
bool timed_tiny_cycle(ThreadTeam& team, const ActionRoutine& routine) {
  const auto started = std::chrono::steady_clock::now();
  team.start_cycle(routine, 1);
  for (int i = 0; i < items_per_cycle; ++i) team.enqueue(item(i));
  team.close_queue();
  watched_wait(team);
  return std::chrono::steady_clock::now() - started < items_per_cycle * detail::tiny_item_time / 2;
}

}  // namespace

TEST_CASE("After a cycle of tiny items, the caller in wait() runs the next cycles' items alone") {
  std::unique_ptr<ThreadTeam> team = polling_team();
  WhoRuns who;
  const ActionRoutine routine = who.routine();
  if (!timed_tiny_cycle(*team, routine)) {
    MESSAGE("100 no-op items took more than 50 us here: not surely tiny, nothing to check");
    return;
  }
  // Hundreds of cycles: without the rule, runs that found the thread polling at each cycle's start
  // had it take the items in all but a few cycles.
  int caller_alone = 0;
  const int cycles = 400;
  for (int c = 0; c < cycles; ++c) {
    who.by_caller = 0;
    who.by_others = 0;
    team->start_cycle(routine, 1);
    for (int i = 0; i < items_per_cycle; ++i) team->enqueue(item(i));
    team->close_queue();
    watched_wait(*team);
    CHECK(who.by_caller + who.by_others == items_per_cycle);
    if (who.by_caller == items_per_cycle) ++caller_alone;
  }
  // A caller preempted for longer than the poll window between start_cycle and wait() finds the
  // items taken by the thread: allowed now and then, on a loaded machine.
  CHECK(caller_alone * 2 > cycles);
}

TEST_CASE("After a cycle of tiny items, a cycle whose caller does not wait still runs") {
  std::unique_ptr<ThreadTeam> team = polling_team();
  WhoRuns who;
  const ActionRoutine routine = who.routine();
  timed_tiny_cycle(*team, routine);
  const int before_rounds = who.by_others;
  for (int round = 0; round < 5; ++round) {
    const int before = who.by_caller + who.by_others;
    team->start_cycle(routine, 1);
    for (int i = 0; i < items_per_cycle; ++i) team->enqueue(item(i));
    // The thread leaves the activation for at most its poll window, then takes it itself.
    CHECK(eventually([&] { return who.by_caller + who.by_others == before + items_per_cycle; }));
    team->close_queue();
    watched_wait(*team);
  }
  CHECK(who.by_others - before_rounds == 5 * items_per_cycle);  // none ran on the caller
}
