// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam: construction, and one TEST_CASE per specified transition of the team state machine
// (modes, events, thread activation, enqueue, close and wait).
#include "test_error_support.hpp"
#include "test_thread_team_support.hpp"

#include <korch/error.hpp>
#include <korch/thread_team.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace korch;
using namespace korch::test;

// ---------------------------------------------------------------------------------------------
// Construction

TEST_CASE("A team starts Idle with N_max Idle threads, an empty queue and no cycle") {
  ThreadTeam team("cpu", 3);
  const TeamSnapshot s = team.snapshot();
  CHECK(s.mode == TeamMode::Idle);
  CHECK(s.n_max == 3);
  CHECK(s.n_idle == 3);
  CHECK(s.n_waiting == 0);
  CHECK(s.n_computing == 0);
  CHECK(s.n_queued == 0);
  CHECK(s.cycle.cycle == 0);
  CHECK(team.name() == "cpu");
}

TEST_CASE("A team may have a single thread, but not zero") {
  ThreadTeam one("single", 1);
  std::atomic<int> calls{0};
  one.start_cycle(counting_routine(calls), 1);
  for (int i = 0; i < 10; ++i) one.enqueue(item(i));
  one.close_queue();
  watched_wait(one);
  CHECK(calls == 10);
  const std::string msg = error_of([] { ThreadTeam none("empty", 0); });
  CHECK(contains(msg, "'empty'"));
  CHECK(contains(msg, "at least 1 thread"));
}

TEST_CASE("Team ids are distinct") {
  ThreadTeam a("a", 1), b("b", 1);
  CHECK(a.id() != b.id());
}

// ---------------------------------------------------------------------------------------------
// Specs of "Thread Teams"

TEST_CASE("Spec: every transition is atomic under the team's one mutex (observed states obey the EFSM)") {
  Recorder rec;
  ThreadTeam team("atomic", 4);
  rec.observe(team);
  std::atomic<bool> stop{false};
  std::atomic<int> snapshots{0};
  // A reader takes snapshots all along: each one must be a consistent state.
  std::thread reader([&] {
    while (!stop.load()) {
      const TeamSnapshot s = team.snapshot();
      const bool ok = s.n_idle + s.n_waiting + s.n_computing == s.n_max &&
                      (s.mode != TeamMode::RunningClosed || s.n_queued > 0) &&
                      (s.mode != TeamMode::RunningNoMoreWork || (s.n_queued == 0 && s.n_idle < s.n_max)) &&
                      (s.mode != TeamMode::Idle || (s.n_queued == 0 && s.n_idle == s.n_max));
      if (!ok) stop = true;
      CHECK(ok);
      ++snapshots;
    }
  });
  std::atomic<int> calls{0};
  // The cycles below can finish before a loaded machine schedules the reader: start once it reads.
  while (snapshots.load() == 0 && !stop.load()) std::this_thread::yield();
  for (int cycle = 0; cycle < 200; ++cycle) {
    team.start_cycle(counting_routine(calls), 1 + cycle % 4);
    for (int i = 0; i < cycle % 13; ++i) team.enqueue(item(i));
    if (cycle % 3 == 0) team.increase_thread_count(0);
    team.close_queue();
    watched_wait(team);
    CAPTURE(cycle);
    for (const auto& v : rec.violations()) MESSAGE(v);
    REQUIRE(rec.violations().empty());  // in the cycle that broke a rule, not after all of them
  }
  stop = true;
  reader.join();
  CHECK(snapshots > 0);
  CHECK(rec.violations().empty());
  for (const auto& v : rec.violations()) MESSAGE(v);
}

TEST_CASE("Spec: the mode changes before threads are signalled (no thread receives activateThread in Idle)") {
  Recorder rec;
  ThreadTeam team("signal-order", 3);
  rec.observe(team);
  std::atomic<int> idle_seen{0};
  ThreadTeam* self = &team;
  const ActionRoutine look("look", [&](const ActionContext&, DataItem&) {
    if (self->mode() == TeamMode::Idle) ++idle_seen;
  });
  // Checked in every cycle, and its start before its wait(): a thread signalled while the team is
  // still Idle may drop its activation, and then the wait() would never return.
  std::size_t checked = 0;  // transitions already looked at
  int starts = 0;
  auto check_new_transitions = [&] {
    const std::vector<TeamTransition> log = rec.of("signal-order");
    for (std::size_t i = checked; i < log.size(); ++i) {
      const TeamTransition& t = log[i];
      if (t.event == TeamEvent::start_cycle) {
        // The activations are sent in the transition that already entered RunningOpen.
        REQUIRE(t.mode != TeamMode::Idle);
        ++starts;
      }
      if (t.event == TeamEvent::activate_thread || t.event == TeamEvent::transition_thread) {
        CHECK(t.thread >= 0);
      }
    }
    checked = log.size();
    for (const auto& v : rec.violations()) MESSAGE(v);
    REQUIRE(rec.violations().empty());
  };
  for (int cycle = 0; cycle < 100; ++cycle) {
    CAPTURE(cycle);
    team.start_cycle(look, 3);
    check_new_transitions();
    REQUIRE(starts == cycle + 1);
    for (int i = 0; i < cycle % 5; ++i) team.enqueue(item(i));
    team.close_queue();
    watched_wait(team);
    REQUIRE(idle_seen == 0);
    check_new_transitions();
  }
}

TEST_CASE("Spec: each item in the pending set is claimed by exactly one thread") {
  ThreadTeam team("claim", 4);
  std::atomic<int> calls{0};
  std::vector<std::shared_ptr<CountedItem>> items;
  for (int i = 0; i < 2000; ++i) items.push_back(item(i));
  team.start_cycle(counting_routine(calls), 4);
  for (auto& it : items) team.enqueue(it);
  team.close_queue();
  watched_wait(team);
  CHECK(calls == 2000);
  for (auto& it : items) CHECK(it->hits[0].load() == 1);
  const CycleReport r = team.last_cycle();
  CHECK(r.enqueued == 2000);
  CHECK(r.processed == 2000);
}

TEST_CASE("Spec: Idle threads wait for activateThread (only activated threads run the routine)") {
  ThreadTeam team("activation", 4);
  std::mutex m;
  std::set<unsigned> threads;
  const ActionRoutine who("who", [&](const ActionContext& ctx, DataItem&) {
    std::lock_guard<std::mutex> lk(m);
    threads.insert(ctx.thread_index());
  });
  team.start_cycle(who, 1);
  for (int i = 0; i < 500; ++i) team.enqueue(item(i));
  team.close_queue();
  watched_wait(team);
  CHECK(threads.size() == 1);
  const TeamSnapshot s = team.snapshot();
  CHECK(s.n_idle == 4);
  CHECK(s.mode == TeamMode::Idle);
}

TEST_CASE("Spec: activating more threads than are Idle and not pending activation is an error") {
  ThreadTeam team("balance", 3);
  SUBCASE("start_cycle asks for more than N_max") {
    const std::string msg = error_of([&] { team.start_cycle(noop_routine(), 4); });
    CHECK(contains(msg, "'balance'"));
    CHECK(contains(msg, "Idle"));
    CHECK(contains(msg, "cannot activate 4 threads"));
    CHECK(team.mode() == TeamMode::Idle);
  }
  SUBCASE("increase_thread_count counts threads already pending activation") {
    Gate gate;
    team.start_cycle(gated_routine(gate), 2);
    team.enqueue(item(0));
    team.enqueue(item(1));
    const std::string msg = error_of([&] { team.increase_thread_count(2); });
    CHECK(contains(msg, "'balance'"));
    CHECK(contains(msg, "RunningOpen"));
    CHECK(contains(msg, "increase_thread_count(2)"));
    team.increase_thread_count(1);  // the one that is left is fine
    const std::string again = error_of([&] { team.increase_thread_count(1); });
    CHECK(contains(again, "increase_thread_count(1)"));
    gate.open();
    team.close_queue();
    watched_wait(team);
  }
}

TEST_CASE("Spec: at most one thread may block in wait() per cycle") {
  ThreadTeam team("one-wait", 2);
  Gate gate;
  team.start_cycle(gated_routine(gate), 1);
  team.enqueue(item(0));
  REQUIRE(gate.wait_inside(1));
  auto first = std::async(std::launch::async, [&] { watched_wait(team); });
  REQUIRE(eventually([&] { return team.snapshot().waiter_blocked; }));
  const std::string msg = error_of([&] { watched_wait(team); });
  CHECK(contains(msg, "'one-wait'"));
  CHECK(contains(msg, "RunningOpen"));
  CHECK(contains(msg, "already blocked in wait()"));
  team.close_queue();
  gate.open();
  first.get();
  CHECK(team.mode() == TeamMode::Idle);
  // The next cycle has its own waiter.
  team.start_cycle(noop_routine(), 1);
  team.close_queue();
  watched_wait(team);
}

TEST_CASE("wait() from the team's own thread is refused instead of deadlocking") {
  ThreadTeam team("self-wait", 1);
  std::string msg;
  ThreadTeam* self = &team;
  team.start_cycle(ActionRoutine("waits_for_itself", [&](const ActionContext&,
                                                         DataItem&) { msg = error_of([&] { watched_wait(*self); }); }),
                   1);
  team.enqueue(item(0));
  team.close_queue();
  watched_wait(team);
  CHECK(contains(msg, "'self-wait'"));
  INFO(msg);
  CHECK(contains(msg, "own thread 0"));
  CHECK(contains(msg, "waits_for_itself"));
}

TEST_CASE("Spec: wait() in Idle returns at once (before the first cycle and between cycles)") {
  ThreadTeam team("idle-wait", 2);
  watched_wait(team);
  watched_wait(team);
  team.start_cycle(noop_routine(), 2);
  team.close_queue();
  watched_wait(team);
  watched_wait(team);  // superfluous, but allowed
  CHECK(team.mode() == TeamMode::Idle);
}

TEST_CASE("Spec: wait() is allowed in RunningOpen and returns when a publisher closes the queue") {
  ThreadTeam pub("pub", 1), sub("sub", 1);
  pub.attach_work_subscriber(sub);
  std::atomic<int> calls{0};
  sub.start_cycle(counting_routine(calls), 1);
  CHECK(sub.mode() == TeamMode::RunningOpen);
  auto waiter = std::async(std::launch::async, [&] { watched_wait(sub); });
  REQUIRE(eventually([&] { return sub.snapshot().waiter_blocked; }));
  CHECK(sub.mode() == TeamMode::RunningOpen);
  pub.start_cycle(noop_routine(), 1);
  for (int i = 0; i < 5; ++i) pub.enqueue(item(i));
  pub.close_queue();
  watched_wait(pub);
  waiter.get();
  CHECK(calls == 5);
  CHECK(sub.mode() == TeamMode::Idle);
}
TEST_CASE("Spec: enqueue is allowed only in RunningOpen") {
  ThreadTeam team("enq", 1);
  SUBCASE("Idle") {
    const std::string msg = error_of([&] { team.enqueue(item(7)); });
    CHECK(contains(msg, "'enq' is Idle"));
    CHECK(contains(msg, "item #7"));
    CHECK(contains(msg, "start its cycle first"));
  }
  SUBCASE("RunningClosed") {
    team.start_cycle(noop_routine(), 0);
    team.enqueue(item(1));
    team.close_queue();
    CHECK(team.mode() == TeamMode::RunningClosed);
    const std::string msg = error_of([&] { team.enqueue(item(2)); });
    CHECK(contains(msg, "'enq' is RunningClosed"));
    team.increase_thread_count(1);
    watched_wait(team);
  }
  SUBCASE("RunningNoMoreWork") {
    Gate gate;
    team.start_cycle(gated_routine(gate), 1);
    team.enqueue(item(1));
    REQUIRE(gate.wait_inside(1));
    team.close_queue();
    CHECK(team.mode() == TeamMode::RunningNoMoreWork);
    const std::string msg = error_of([&] { team.enqueue(item(2)); });
    CHECK(contains(msg, "'enq' is RunningNoMoreWork"));
    gate.open();
    watched_wait(team);
  }
  SUBCASE("a null item") {
    CHECK(contains(error_of([&] { team.enqueue(nullptr); }), "null item"));
  }
}

TEST_CASE("Enqueueing several items at once: all in order, or none with an error naming the bad item") {
  ThreadTeam team("batch", 1);
  std::vector<int> order;
  team.start_cycle(ActionRoutine("log",
                                 [&order](const ActionContext&, DataItem& it) {
                                   order.push_back(static_cast<CountedItem&>(it).id);  // one thread: no race
                                 }),
                   0);
  std::vector<std::shared_ptr<DataItem>> items;
  for (int i = 0; i < 100; ++i) items.push_back(item(i));
  team.enqueue(items);
  team.enqueue(std::vector<std::shared_ptr<DataItem>>{});  // nothing: allowed
  std::vector<std::shared_ptr<DataItem>> with_null{item(100), nullptr, item(102)};
  const std::string null_msg = error_of([&] { team.enqueue(with_null); });
  CHECK(contains(null_msg, "'batch'"));
  CHECK(contains(null_msg, "item 1 is null"));
  CHECK(contains(null_msg, "none was enqueued"));
  CHECK(team.snapshot().n_queued == 100);
  team.increase_thread_count(1);
  team.close_queue();
  watched_wait(team);
  REQUIRE(order.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);
  CHECK(team.last_cycle().enqueued == 100);
  CHECK(team.last_cycle().processed == 100);
  // Outside RunningOpen the whole batch is refused.
  const std::string idle_msg = error_of([&] {
    team.enqueue(std::vector<std::shared_ptr<DataItem>>{item(7), item(8)});
  });
  CHECK(contains(idle_msg, "'batch' is Idle"));
  CHECK(contains(idle_msg, "item #7"));
  CHECK(contains(idle_msg, "none of the 2 items was enqueued"));
}

TEST_CASE("Enqueueing batches from several threads while the team runs loses no item") {
  ThreadTeam team("batches", 3);
  std::atomic<int> calls{0};
  team.start_cycle(counting_routine(calls), 3);
  std::vector<std::shared_ptr<CountedItem>> all;
  for (int i = 0; i < 3000; ++i) all.push_back(item(i));
  std::vector<std::thread> feeders;
  for (int f = 0; f < 3; ++f) {
    feeders.emplace_back([&, f] {
      for (int start = f * 1000; start < (f + 1) * 1000;) {
        const int n = 1 + start % 37;
        std::vector<std::shared_ptr<DataItem>> batch;
        for (int i = start; i < std::min(start + n, (f + 1) * 1000); ++i)
          batch.push_back(all[static_cast<std::size_t>(i)]);
        start += n;
        team.enqueue(std::move(batch));
      }
    });
  }
  for (auto& t : feeders) t.join();
  team.close_queue();
  watched_wait(team);
  CHECK(calls.load() == 3000);
  for (const auto& it : all) CHECK(it->hits[0].load() == 1);
}

TEST_CASE("Spec: close_queue is allowed only in RunningOpen") {
  ThreadTeam team("close", 1);
  CHECK(contains(error_of([&] { team.close_queue(); }), "'close' is Idle"));
  team.start_cycle(noop_routine(), 0);
  team.enqueue(item(0));
  team.close_queue();
  CHECK(contains(error_of([&] { team.close_queue(); }), "'close' is RunningClosed"));
  team.increase_thread_count(1);
  watched_wait(team);
}

TEST_CASE("Spec: RunningClosed never holds an empty queue") {
  Recorder rec;
  ThreadTeam team("closed", 2);
  rec.observe(team);
  SUBCASE("closing an empty queue never enters RunningClosed") {
    team.start_cycle(noop_routine(), 0);
    team.close_queue();
    CHECK(team.mode() == TeamMode::Idle);  // no active thread: straight to Idle
    team.start_cycle(noop_routine(), 2);
    REQUIRE(eventually([&] { return team.snapshot().n_waiting == 2; }));
    team.close_queue();
    CHECK(team.mode() != TeamMode::RunningClosed);
    watched_wait(team);
  }
  SUBCASE("the thread that takes the last item leaves RunningClosed in the same transition") {
    team.start_cycle(noop_routine(), 0);
    for (int i = 0; i < 3; ++i) team.enqueue(item(i));
    team.close_queue();
    const TeamSnapshot s = team.snapshot();
    CHECK(s.mode == TeamMode::RunningClosed);
    CHECK(s.n_queued == 3);
    CHECK(s.n_idle == s.n_max);  // allowed: a thread may still be pushed to the team
    team.increase_thread_count(1);
    watched_wait(team);
    bool saw_last_dequeue = false;
    for (const TeamTransition& t : rec.of("closed")) {
      if (t.thread >= 0 && t.n_queued == 0 && t.mode == TeamMode::RunningNoMoreWork && t.n_computing > 0) {
        saw_last_dequeue = true;
      }
    }
    CHECK(saw_last_dequeue);
  }
  CHECK(rec.violations().empty());
  for (const auto& v : rec.violations()) MESSAGE(v);
}

TEST_CASE("Spec: RunningNoMoreWork always has an empty queue and at least one non-Idle thread") {
  Recorder rec;
  ThreadTeam team("nmw", 3);
  rec.observe(team);
  Gate gate;
  team.start_cycle(gated_routine(gate), 3);
  team.enqueue(item(0));
  REQUIRE(gate.wait_inside(1));
  REQUIRE(eventually([&] { return team.snapshot().n_waiting == 2; }));
  team.close_queue();
  const TeamSnapshot s = team.snapshot();
  CHECK(s.mode == TeamMode::RunningNoMoreWork);
  CHECK(s.n_queued == 0);
  CHECK(s.n_idle < s.n_max);
  gate.open();
  watched_wait(team);
  bool saw_nmw = false;
  for (const TeamTransition& t : rec.of("nmw")) saw_nmw = saw_nmw || t.mode == TeamMode::RunningNoMoreWork;
  CHECK(saw_nmw);
  CHECK(rec.violations().empty());
}

TEST_CASE("Spec: entering RunningNoMoreWork wakes every Waiting thread") {
  Recorder rec;
  ThreadTeam team("awaken", 3);
  rec.observe(team);
  team.start_cycle(noop_routine(), 3);
  REQUIRE(eventually([&] { return team.snapshot().n_waiting == 3; }));
  team.close_queue();
  watched_wait(team);  // would hang if a Waiting thread had not been woken
  std::set<int> woken;
  bool entered = false;
  for (const TeamTransition& t : rec.of("awaken")) {
    if (t.event == TeamEvent::close_queue) {
      CHECK(t.mode == TeamMode::RunningNoMoreWork);
      CHECK(t.n_waiting == 3);
      entered = true;
    }
    if (entered && t.event == TeamEvent::transition_thread) woken.insert(t.thread);
  }
  CHECK(woken.size() == 3);
  CHECK(team.snapshot().n_idle == 3);
}

TEST_CASE("Spec: the last thread to go Idle sets Idle (RunningNoMoreWork -> Idle)") {
  Recorder rec;
  ThreadTeam team("last", 4);
  rec.observe(team);
  for (int cycle = 0; cycle < 50; ++cycle) {
    team.start_cycle(noop_routine(), 4);
    for (int i = 0; i < 20; ++i) team.enqueue(item(i));
    team.close_queue();
    watched_wait(team);
    CAPTURE(cycle);
    REQUIRE(team.snapshot().n_idle == 4);
    REQUIRE(rec.violations().empty());
  }
  int by_thread = 0;
  const auto log = rec.of("last");
  for (std::size_t i = 1; i < log.size(); ++i) {
    if (log[i].mode == TeamMode::Idle && log[i - 1].mode == TeamMode::RunningNoMoreWork) {
      CHECK(log[i].thread >= 0);  // a team thread, not the caller
      CHECK(log[i].n_idle == 4);
      ++by_thread;
    }
  }
  CHECK(by_thread > 0);
  CHECK(rec.violations().empty());
}
