// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam under misuse a user can reach from the public API: a cycle that can never get a thread,
// and a routine that destroys its own team. Each is a korch::Error, never a hang or std::terminate.
#include "test_error_support.hpp"
#include "test_thread_team_support.hpp"

#include <korch/error.hpp>
#include <korch/thread_team.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>

using namespace korch;
using namespace korch::test;

TEST_CASE("A closed cycle with queued items that no thread can ever run fails wait() instead of hanging") {
  ThreadTeam team("threadless", 1);
  std::atomic<int> calls{0};
  team.start_cycle(counting_routine(calls), 0);  // allowed: threads may still be added
  team.enqueue(item(1));
  SUBCASE("wait() after the close") {
    team.close_queue();
    const std::string msg = error_of([&] { watched_wait(team); });
    CHECK(contains(msg, "'threadless' is RunningClosed"));
    CHECK(contains(msg, "wait() would never return"));
    CHECK(contains(msg, "increase_thread_count"));
  }
  SUBCASE("a caller already blocked in wait() when the queue closes") {
    auto waiter = std::async(std::launch::async, [&] { return error_of([&] { watched_wait(team); }); });
    REQUIRE(eventually([&] { return team.snapshot().waiter_blocked; }));
    team.close_queue();
    REQUIRE(waiter.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    CHECK(contains(waiter.get(), "wait() would never return"));
  }
  // The cycle is still there and can be completed by giving it a thread.
  CHECK(team.mode() == TeamMode::RunningClosed);
  team.increase_thread_count(1);
  watched_wait(team);
  CHECK(calls == 1);
  CHECK(team.mode() == TeamMode::Idle);
}

TEST_CASE("A cycle without threads is not refused while a caller may still join it or a thread publisher may feed it") {
  SUBCASE("waiter_joins: the caller in wait() runs the items") {
    TeamOptions options;
    options.waiter_joins = true;
    ThreadTeam team("joins", 1, options);
    std::atomic<int> calls{0};
    team.start_cycle(counting_routine(calls), 0);
    team.enqueue(item(1));
    team.close_queue();
    watched_wait(team);
    CHECK(calls == 1);
  }
  SUBCASE("a thread publisher hands its threads on when it finishes") {
    ThreadTeam pub("lender", 1), sub("borrower", 1);
    pub.attach_thread_subscriber(sub);
    std::atomic<int> calls{0};
    sub.start_cycle(counting_routine(calls), 0);
    sub.enqueue(item(1));
    sub.close_queue();
    pub.start_cycle(noop_routine(), 1);
    pub.close_queue();
    watched_wait(pub);
    watched_wait(sub);
    CHECK(calls == 1);
  }
}

namespace {

// A routine that destroys the team that runs it (held in `owner`), once `ready` allows; only the
// first call does, the others return at once.
ActionRoutine self_destroying_routine(std::unique_ptr<ThreadTeam>& owner, std::atomic<bool>& destroyed,
                                      const std::function<bool()>& ready) {
  auto claimed = std::make_shared<std::atomic<bool>>(false);
  return ActionRoutine("self_destroy", [&owner, &destroyed, ready, claimed](const ActionContext&, DataItem&) {
    if (claimed->exchange(true) || !eventually(ready)) return;
    owner.reset();
    destroyed = true;
  });
}

}  // namespace

TEST_CASE("A routine that destroys its own team ends the cycle with a korch::Error, never std::terminate") {
  std::atomic<bool> destroyed{false};
  SUBCASE("on a team thread, while a caller waits: wait() throws the error") {
    TeamOptions options;
    options.waiter_works = false;  // the routine runs on a team thread
    auto owner = std::make_unique<ThreadTeam>("doomed", 2, options);
    ThreadTeam* const team = owner.get();
    team->start_cycle(self_destroying_routine(owner, destroyed, [team] { return team->snapshot().waiter_blocked; }), 2);
    for (int i = 0; i < 4; ++i) team->enqueue(item(i));
    team->close_queue();
    const std::string msg = error_of([team] { watched_wait(*team); });
    CHECK(contains(msg, "team 'doomed' was destroyed by its own action routine 'self_destroy'"));
    CHECK(contains(msg, "destroy it from outside, after wait()"));
    REQUIRE(eventually([&] { return destroyed.load(); }));  // the waiter is released before the destructor ends
  }
  SUBCASE("on a team thread, with nobody waiting") {
    auto owner = std::make_unique<ThreadTeam>("doomed", 1);
    ThreadTeam* const team = owner.get();
    std::atomic<bool> fed{false};  // no call of the team may be running when it is destroyed
    team->start_cycle(self_destroying_routine(owner, destroyed, [&fed] { return fed.load(); }), 1);
    team->enqueue(item(0));
    fed = true;
    REQUIRE(eventually([&] { return destroyed.load(); }));
  }
  SUBCASE("on the caller in wait(), which runs the routine in a team thread's place: wait() throws the error") {
    TeamOptions options;
    options.waiter_joins = true;  // no thread is activated, so the caller in wait() runs the item
    auto owner = std::make_unique<ThreadTeam>("doomed", 1, options);
    ThreadTeam* const team = owner.get();
    team->start_cycle(self_destroying_routine(owner, destroyed, [] { return true; }), 0);
    team->enqueue(item(0));
    team->close_queue();
    const std::string msg = error_of([team] { watched_wait(*team); });
    CHECK(contains(msg, "team 'doomed' was destroyed by its own action routine 'self_destroy'"));
    CHECK(destroyed.load());
  }
}

TEST_CASE("A negative poll or nap limit is refused with a korch::Error naming the option") {
  TeamOptions spin;
  spin.spin = std::chrono::microseconds(-1);
  TeamOptions nap;
  nap.contended_nap = std::chrono::microseconds(-5);
  for (const auto& [options, name] :
       {std::pair{spin, "TeamOptions::spin"}, std::pair{nap, "TeamOptions::contended_nap"}}) {
    try {
      ThreadTeam team("negative", 1, options);
      FAIL("a team was created with a negative " << name);
    } catch (const Error& e) {
      CHECK(contains(e.what(), name));
      CHECK(contains(e.what(), "negative"));
    }
  }
  TeamOptions off;
  off.spin = std::chrono::microseconds(0);
  off.contended_nap = std::chrono::microseconds(0);
  CHECK_NOTHROW(ThreadTeam("off", 1, off));
}
