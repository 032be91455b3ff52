// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam: work and thread publishers/subscribers (linking, handing on items and threads,
// several publishers, Req ThreadBalance) and destroying teams in any mode.
#include "test_error_support.hpp"
#include "test_thread_team_support.hpp"

#include <korch/error.hpp>
#include <korch/thread_team.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <future>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace korch;
using namespace korch::test;

TEST_CASE("Spec: subscribers are attached and detached only in Idle") {
  ThreadTeam a("a", 1), b("b", 1);
  Gate gate;
  a.start_cycle(gated_routine(gate), 1);
  const std::string w = error_of([&] { a.attach_work_subscriber(b); });
  CHECK(contains(w, "'a' is RunningOpen"));
  CHECK(contains(w, "attach_work_subscriber"));
  const std::string t = error_of([&] { a.attach_thread_subscriber(b); });
  CHECK(contains(t, "'a' is RunningOpen"));
  // The subscriber must be Idle too.
  const std::string s = error_of([&] { b.attach_work_subscriber(a); });
  CHECK(contains(s, "'a' is RunningOpen"));
  a.close_queue();
  watched_wait(a);
  a.attach_work_subscriber(b);
  a.attach_thread_subscriber(b);
  b.start_cycle(noop_routine(), 0);  // its one thread comes from a
  CHECK(contains(error_of([&] { a.detach_work_subscriber(); }), "'b' is RunningOpen"));
  CHECK(contains(error_of([&] { a.detach_thread_subscriber(); }), "'b' is RunningOpen"));
  a.start_cycle(noop_routine(), 1);
  a.close_queue();
  watched_wait(a);
  watched_wait(b);
  a.detach_work_subscriber();
  a.detach_thread_subscriber();
  CHECK_FALSE(a.snapshot().has_work_subscriber);
  CHECK(b.snapshot().work_publishers == 0);
}

TEST_CASE("Spec: a finished item is enqueued with the work subscriber") {
  ThreadTeam a("producer", 2), b("consumer", 2);
  a.attach_work_subscriber(b);
  std::atomic<int> out_of_order{0};
  const ActionRoutine first(
      "stamp", [](const ActionContext&, DataItem& it) { static_cast<CountedItem&>(it).hits[0].fetch_add(1); });
  const ActionRoutine second("check", [&](const ActionContext&, DataItem& it) {
    auto& c = static_cast<CountedItem&>(it);
    if (c.hits[0].load() != 1) ++out_of_order;
    c.hits[1].fetch_add(1);
  });
  std::vector<std::shared_ptr<CountedItem>> items;
  for (int i = 0; i < 300; ++i) items.push_back(item(i));
  b.start_cycle(second, 2);
  a.start_cycle(first, 2);
  for (auto& it : items) a.enqueue(it);
  a.close_queue();
  watched_wait(a);
  watched_wait(b);
  CHECK(out_of_order == 0);
  for (auto& it : items) CHECK(it->hits[1].load() == 1);
  CHECK(a.last_cycle().forwarded == 300);
  CHECK(b.last_cycle().enqueued == 300);
}

TEST_CASE(
    "Spec: the transition to Idle enqueues the last item, then closes the work subscriber, then releases the waiter") {
  Recorder rec;
  ThreadTeam a("pub", 3), b("sub", 1);
  a.attach_work_subscriber(b);
  rec.observe(b);
  for (int cycle = 0; cycle < 50; ++cycle) {
    rec.clear();
    b.start_cycle(noop_routine(), 0);  // b holds what it gets until its thread is added
    a.start_cycle(noop_routine(), 3);
    for (int i = 0; i < 10; ++i) a.enqueue(item(i));
    a.close_queue();
    watched_wait(a);
    // a's waiter was released only after b had every item and the close.
    const TeamSnapshot s = b.snapshot();
    CHECK(s.closes_pending == 0);
    CHECK(s.mode == TeamMode::RunningClosed);
    CHECK(s.n_queued == 10);
    const auto log = rec.of("sub");
    std::size_t received = 0;
    bool closed = false;
    for (const TeamTransition& t : log) {
      if (t.event == TeamEvent::item_received) {
        CHECK_FALSE(closed);
        ++received;
      }
      if (t.event == TeamEvent::publisher_closed) closed = true;
    }
    CHECK(received == 10);
    CHECK(closed);
    b.increase_thread_count(1);
    watched_wait(b);
  }
}

TEST_CASE("Spec: Idle threads hand themselves to the thread subscriber") {
  ThreadTeam a("giver", 3), b("taker", 3);
  a.attach_thread_subscriber(b);
  Recorder rec;
  rec.observe(b);
  std::atomic<int> calls{0};
  // b starts with no thread: it can only run on the threads a hands over.
  b.start_cycle(counting_routine(calls, 1), 0);
  for (int i = 0; i < 30; ++i) b.enqueue(item(i));
  b.close_queue();
  a.start_cycle(noop_routine(), 3);
  for (int i = 0; i < 30; ++i) a.enqueue(item(i));
  a.close_queue();
  watched_wait(a);
  watched_wait(b);
  CHECK(calls == 30);
  CHECK(a.last_cycle().threads_forwarded == 3);
  unsigned received = 0;  // one event may carry several threads
  for (const TeamTransition& t : rec.of("taker")) {
    if (t.event == TeamEvent::threads_received) ++received;
  }
  CHECK(received >= 1);
  CHECK(rec.violations().empty());
}

TEST_CASE("Spec: an activation the team does not need is handed to the thread subscriber") {
  ThreadTeam a("a", 2), b("b", 2);
  a.attach_thread_subscriber(b);
  std::atomic<int> calls{0};
  SUBCASE("activations still in flight when the cycle ends") {
    // With one item for a, one thread is often still computing it when the other's activation
    // arrives in RunningNoMoreWork; without it, the cycle often ends with activations in flight.
    // Checked in every cycle: a lost thread leaves b short of threads from then on.
    const ActionRoutine brief("brief", [](const ActionContext&, DataItem&) {
      volatile unsigned x = 1;
      for (unsigned i = 0; i < 20000; ++i) x = x * 1664525U + 1013904223U;
    });
    for (int cycle = 0; cycle < 400; ++cycle) {
      CAPTURE(cycle);
      b.start_cycle(counting_routine(calls), 0);
      b.enqueue(item(cycle));
      b.close_queue();
      a.start_cycle(cycle % 2 == 0 ? brief : noop_routine(), 2);
      if (cycle % 2 == 0) a.enqueue(item(cycle));
      a.close_queue();  // the activations may not have arrived yet: they are handed on, not lost
      watched_wait(a);
      watched_wait(b);
      REQUIRE(a.last_cycle().threads_forwarded == 2);
      REQUIRE(b.last_cycle().threads_received == 2);
      REQUIRE(a.snapshot().n_to_activate == 0);
    }
    CHECK(calls == 400);
  }
  SUBCASE("increase_thread_count in RunningNoMoreWork") {
    Gate gate;
    b.start_cycle(counting_routine(calls), 0);
    b.enqueue(item(0));
    b.close_queue();
    a.start_cycle(gated_routine(gate), 1);
    a.enqueue(item(1));
    REQUIRE(gate.wait_inside(1));
    a.close_queue();
    CHECK(a.mode() == TeamMode::RunningNoMoreWork);
    a.increase_thread_count(1);  // not needed by a: goes to b, which runs its item
    watched_wait(b);
    CHECK(calls == 1);
    gate.open();
    watched_wait(a);
  }
}

TEST_CASE("Spec: increase_thread_count in Idle forwards the threads to the thread subscriber") {
  ThreadTeam a("idle-giver", 1), b("runner", 2);
  a.attach_thread_subscriber(b);
  std::atomic<int> calls{0};
  b.start_cycle(counting_routine(calls), 0);
  for (int i = 0; i < 10; ++i) b.enqueue(item(i));
  b.close_queue();
  CHECK(a.mode() == TeamMode::Idle);
  a.increase_thread_count(2);
  watched_wait(b);
  CHECK(calls == 10);
  // Without a subscriber the threads are simply not needed.
  ThreadTeam lonely("lonely", 1);
  lonely.increase_thread_count(5);
  CHECK(lonely.mode() == TeamMode::Idle);
}

TEST_CASE("Spec: a team cannot publish work or threads to itself (nor through a cycle of teams)") {
  ThreadTeam a("a", 1), b("b", 1), c("c", 1);
  const std::string w = error_of([&] { a.attach_work_subscriber(a); });
  CHECK(contains(w, "'a' cannot be its own work subscriber"));
  const std::string t = error_of([&] { a.attach_thread_subscriber(a); });
  CHECK(contains(t, "'a' cannot be its own thread subscriber"));
  a.attach_work_subscriber(b);
  b.attach_work_subscriber(c);
  CHECK(contains(error_of([&] { c.attach_work_subscriber(a); }), "cycle"));
  a.attach_thread_subscriber(b);
  CHECK(contains(error_of([&] { b.attach_thread_subscriber(a); }), "circle"));
  CHECK(contains(error_of([&] { a.attach_work_subscriber(c); }), "already has work subscriber 'b'"));
}

TEST_CASE("Spec: a team can be destroyed in any mode without deadlock or leak") {
  std::weak_ptr<CountedItem> queued;
  std::weak_ptr<CountedItem> running;
  SUBCASE("Idle") { ThreadTeam team("idle", 2); }
  SUBCASE("RunningOpen with Waiting threads") {
    ThreadTeam team("open", 3);
    team.start_cycle(noop_routine(), 3);
    REQUIRE(eventually([&] { return team.snapshot().n_waiting == 3; }));
  }
  SUBCASE("RunningOpen with activations in flight and a blocked waiter") {
    auto team = std::make_unique<ThreadTeam>("open-waiter", 2);
    team->start_cycle(noop_routine(), 2);
    ThreadTeam* const raw = team.get();
    auto waiter = std::async(std::launch::async, [raw] {
      try {
        watched_wait(*raw);
      } catch (const Error& e) {
        return std::string(e.what());
      }
      return std::string();
    });
    REQUIRE(eventually([&] { return team->snapshot().waiter_blocked; }));
    team.reset();
    CHECK(contains(waiter.get(), "destroyed"));
  }
  SUBCASE("RunningClosed with queued items") {
    Gate gate;
    std::thread opener;
    {
      ThreadTeam team("closed", 1);
      team.start_cycle(gated_routine(gate), 1);
      auto a = item(0), b = item(1);
      running = a;
      queued = b;
      team.enqueue(std::move(a));
      team.enqueue(std::move(b));
      REQUIRE(gate.wait_inside(1));
      team.close_queue();
      CHECK(team.mode() == TeamMode::RunningClosed);
      opener = std::thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        gate.open();
      });
    }
    opener.join();
    CHECK(queued.expired());
    CHECK(running.expired());
  }
  SUBCASE("RunningNoMoreWork") {
    Gate gate;
    std::thread opener;
    {
      ThreadTeam team("nmw", 2);
      team.start_cycle(gated_routine(gate), 2);
      team.enqueue(item(0));
      REQUIRE(gate.wait_inside(1));
      team.close_queue();
      opener = std::thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        gate.open();
      });
    }
    opener.join();
  }
  SUBCASE("a publisher destroyed mid-cycle closes its subscriber") {
    ThreadTeam sub("sub", 1);
    std::atomic<int> calls{0};
    {
      ThreadTeam pub("pub", 1);
      pub.attach_work_subscriber(sub);
      sub.start_cycle(counting_routine(calls), 1);
      pub.start_cycle(noop_routine(), 1);
      pub.enqueue(item(0));
    }
    watched_wait(sub);  // would hang if the dying publisher had not closed it
    CHECK(sub.mode() == TeamMode::Idle);
    CHECK(sub.snapshot().work_publishers == 0);
  }
  SUBCASE("a subscriber destroyed before its publisher unlinks itself") {
    ThreadTeam pub("pub", 1);
    {
      ThreadTeam sub("sub", 1);
      pub.attach_work_subscriber(sub);
      pub.attach_thread_subscriber(sub);
    }
    CHECK_FALSE(pub.snapshot().has_work_subscriber);
    CHECK_FALSE(pub.snapshot().has_thread_subscriber);
    pub.start_cycle(noop_routine(), 1);
    pub.enqueue(item(0));
    pub.close_queue();
    watched_wait(pub);
  }
}

// ---------------------------------------------------------------------------------------------
// The extension: several work publishers

TEST_CASE("Extension: a work subscriber with several publishers leaves RunningOpen only after each has closed") {
  ThreadTeam p1("p1", 1), p2("p2", 2), sub("sub", 2);
  p1.attach_work_subscriber(sub);
  p2.attach_work_subscriber(sub);
  CHECK(sub.snapshot().work_publishers == 2);
  std::atomic<int> calls{0};
  for (int cycle = 0; cycle < 20; ++cycle) {
    sub.start_cycle(counting_routine(calls), 1);
    CHECK(sub.snapshot().closes_pending == 2);
    p1.start_cycle(noop_routine(), 1);
    p1.enqueue(item(1));
    p1.close_queue();
    watched_wait(p1);
    CHECK(sub.mode() == TeamMode::RunningOpen);  // p2 has not closed yet
    CHECK(sub.snapshot().closes_pending == 1);
    p2.start_cycle(noop_routine(), 2);
    for (int i = 0; i < 4; ++i) p2.enqueue(item(i));
    p2.close_queue();
    watched_wait(p2);
    watched_wait(sub);
  }
  CHECK(calls == 20 * 5);
  // Its publishers close it; external code may not, unless registered.
  sub.start_cycle(noop_routine(), 1);
  const std::string msg = error_of([&] { sub.close_queue(); });
  CHECK(contains(msg, "'sub' is RunningOpen"));
  CHECK(contains(msg, "add_external_work_publisher"));
  p1.start_cycle(noop_routine(), 1);
  p1.close_queue();
  p2.start_cycle(noop_routine(), 1);
  p2.close_queue();
  watched_wait(p1);
  watched_wait(p2);
  watched_wait(sub);
}

TEST_CASE("Extension: an external work publisher counts as one more publisher") {
  ThreadTeam pub("pub", 1), sub("sub", 1);
  pub.attach_work_subscriber(sub);
  sub.add_external_work_publisher();
  std::atomic<int> calls{0};
  sub.start_cycle(counting_routine(calls), 1);
  pub.start_cycle(noop_routine(), 1);
  pub.enqueue(item(0));
  pub.close_queue();
  watched_wait(pub);
  CHECK(sub.mode() == TeamMode::RunningOpen);
  sub.enqueue(item(1));  // the external feeder
  sub.close_queue();
  watched_wait(sub);
  CHECK(calls == 2);
  sub.remove_external_work_publisher();
  CHECK(contains(error_of([&] { sub.remove_external_work_publisher(); }), "no external work publisher"));
}

TEST_CASE("Publishing to a subscriber whose cycle was not started fails the publisher's cycle") {
  ThreadTeam pub("pub", 1), sub("sub", 1);
  pub.attach_work_subscriber(sub);
  pub.start_cycle(noop_routine(), 1);
  pub.enqueue(item(3));
  pub.close_queue();
  const std::string msg = error_of([&] { watched_wait(pub); });
  CHECK(contains(msg, "'sub' is Idle"));
  CHECK(contains(msg, "item #3"));
  CHECK(contains(msg, "work publisher 'pub'"));
  const CycleReport r = pub.last_cycle();
  CHECK(r.processed == 1);
  CHECK(r.undelivered == 1);
  CHECK(pub.mode() == TeamMode::Idle);
}

// ---------------------------------------------------------------------------------------------
// Req ThreadBalance

TEST_CASE("Req ThreadBalance: a thread subscriber given more threads than it has Idle emits an error") {
  ThreadTeam pub("pub", 2), sub("sub", 1);
  pub.attach_thread_subscriber(sub);
  Gate gate;
  sub.start_cycle(gated_routine(gate), 1);  // its only thread is busy
  sub.enqueue(item(0));
  REQUIRE(gate.wait_inside(1));
  pub.start_cycle(noop_routine(), 2);
  pub.close_queue();
  watched_wait(pub);  // pub's threads went Idle and were pushed to sub
  sub.close_queue();
  gate.open();
  const std::string msg = error_of([&] { watched_wait(sub); });
  CHECK(contains(msg, "'sub'"));
  CHECK(contains(msg, "thread publisher 'pub'"));
  CHECK(contains(msg, "ThreadBalance"));
  CHECK(sub.mode() == TeamMode::Idle);
}
