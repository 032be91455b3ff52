// ThreadTeam: one TEST_CASE per specified transition of the team state machine, the error cases, publisher and
// subscriber chains, exception propagation and the action context.
#include "test_error_support.hpp"
#include "test_thread_team_support.hpp"

#include <korch/error.hpp>
#include <korch/thread_team.hpp>

#include <Kokkos_Core.hpp>
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
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
  one.wait();
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
    team.wait();
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
  for (int cycle = 0; cycle < 100; ++cycle) {
    team.start_cycle(look, 3);
    for (int i = 0; i < cycle % 5; ++i) team.enqueue(item(i));
    team.close_queue();
    team.wait();
  }
  CHECK(idle_seen == 0);
  for (const TeamTransition& t : rec.of("signal-order")) {
    if (t.event == TeamEvent::start_cycle) {
      // The activations are sent in the transition that already entered RunningOpen.
      CHECK(t.mode != TeamMode::Idle);
    }
    if (t.event == TeamEvent::activate_thread || t.event == TeamEvent::transition_thread) {
      CHECK(t.thread >= 0);
    }
  }
  CHECK(rec.violations().empty());
}

TEST_CASE("Spec: each item in the pending set is claimed by exactly one thread") {
  ThreadTeam team("claim", 4);
  std::atomic<int> calls{0};
  std::vector<std::shared_ptr<CountedItem>> items;
  for (int i = 0; i < 2000; ++i) items.push_back(item(i));
  team.start_cycle(counting_routine(calls), 4);
  for (auto& it : items) team.enqueue(it);
  team.close_queue();
  team.wait();
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
  team.wait();
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
    team.wait();
  }
}

TEST_CASE("Spec: at most one thread may block in wait() per cycle") {
  ThreadTeam team("one-wait", 2);
  Gate gate;
  team.start_cycle(gated_routine(gate), 1);
  team.enqueue(item(0));
  REQUIRE(gate.wait_inside(1));
  auto first = std::async(std::launch::async, [&] { team.wait(); });
  REQUIRE(eventually([&] { return team.snapshot().waiter_blocked; }));
  const std::string msg = error_of([&] { team.wait(); });
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
  team.wait();
}

TEST_CASE("wait() from the team's own thread is refused instead of deadlocking") {
  ThreadTeam team("self-wait", 1);
  std::string msg;
  ThreadTeam* self = &team;
  team.start_cycle(ActionRoutine("waits_for_itself", [&](const ActionContext&, DataItem&) { msg = error_of([&] { self->wait(); }); }), 1);
  team.enqueue(item(0));
  team.close_queue();
  team.wait();
  CHECK(contains(msg, "'self-wait'"));
  INFO(msg);
  CHECK(contains(msg, "own thread 0"));
  CHECK(contains(msg, "waits_for_itself"));
}

TEST_CASE("Spec: wait() in Idle returns at once (before the first cycle and between cycles)") {
  ThreadTeam team("idle-wait", 2);
  team.wait();
  team.wait();
  team.start_cycle(noop_routine(), 2);
  team.close_queue();
  team.wait();
  team.wait();  // superfluous, but allowed
  CHECK(team.mode() == TeamMode::Idle);
}

TEST_CASE("Spec: wait() is allowed in RunningOpen and returns when a publisher closes the queue") {
  ThreadTeam pub("pub", 1), sub("sub", 1);
  pub.attach_work_subscriber(sub);
  std::atomic<int> calls{0};
  sub.start_cycle(counting_routine(calls), 1);
  CHECK(sub.mode() == TeamMode::RunningOpen);
  auto waiter = std::async(std::launch::async, [&] { sub.wait(); });
  REQUIRE(eventually([&] { return sub.snapshot().waiter_blocked; }));
  CHECK(sub.mode() == TeamMode::RunningOpen);
  pub.start_cycle(noop_routine(), 1);
  for (int i = 0; i < 5; ++i) pub.enqueue(item(i));
  pub.close_queue();
  pub.wait();
  waiter.get();
  CHECK(calls == 5);
  CHECK(sub.mode() == TeamMode::Idle);
}

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
  a.wait();
  a.attach_work_subscriber(b);
  a.attach_thread_subscriber(b);
  b.start_cycle(noop_routine(), 0);  // its one thread comes from a
  CHECK(contains(error_of([&] { a.detach_work_subscriber(); }), "'b' is RunningOpen"));
  CHECK(contains(error_of([&] { a.detach_thread_subscriber(); }), "'b' is RunningOpen"));
  a.start_cycle(noop_routine(), 1);
  a.close_queue();
  a.wait();
  b.wait();
  a.detach_work_subscriber();
  a.detach_thread_subscriber();
  CHECK_FALSE(a.snapshot().has_work_subscriber);
  CHECK(b.snapshot().work_publishers == 0);
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
    team.wait();
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
    team.wait();
  }
  SUBCASE("a null item") { CHECK(contains(error_of([&] { team.enqueue(nullptr); }), "null item")); }
}

TEST_CASE("Enqueueing several items at once: all in order, or none with an error naming the bad item") {
  ThreadTeam team("batch", 1);
  std::vector<int> order;
  team.start_cycle(ActionRoutine("log", [&order](const ActionContext&, DataItem& it) {
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
  team.wait();
  REQUIRE(order.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(order[static_cast<std::size_t>(i)] == i);
  CHECK(team.last_cycle().enqueued == 100);
  CHECK(team.last_cycle().processed == 100);
  // Outside RunningOpen the whole batch is refused.
  const std::string idle_msg = error_of([&] { team.enqueue(std::vector<std::shared_ptr<DataItem>>{item(7), item(8)}); });
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
        for (int i = start; i < std::min(start + n, (f + 1) * 1000); ++i) batch.push_back(all[static_cast<std::size_t>(i)]);
        start += n;
        team.enqueue(std::move(batch));
      }
    });
  }
  for (auto& t : feeders) t.join();
  team.close_queue();
  team.wait();
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
  team.wait();
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
    team.wait();
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
    team.wait();
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
  team.wait();
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
  team.wait();  // would hang if a Waiting thread had not been woken
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
    team.wait();
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

TEST_CASE("Spec: a finished item is enqueued with the work subscriber") {
  ThreadTeam a("producer", 2), b("consumer", 2);
  a.attach_work_subscriber(b);
  std::atomic<int> out_of_order{0};
  const ActionRoutine first("stamp", [](const ActionContext&, DataItem& it) {
    static_cast<CountedItem&>(it).hits[0].fetch_add(1);
  });
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
  a.wait();
  b.wait();
  CHECK(out_of_order == 0);
  for (auto& it : items) CHECK(it->hits[1].load() == 1);
  CHECK(a.last_cycle().forwarded == 300);
  CHECK(b.last_cycle().enqueued == 300);
}

TEST_CASE("Spec: the transition to Idle enqueues the last item, then closes the work subscriber, then releases the waiter") {
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
    a.wait();
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
    b.wait();
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
  a.wait();
  b.wait();
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
    for (int cycle = 0; cycle < 100; ++cycle) {
      b.start_cycle(counting_routine(calls), 0);
      b.enqueue(item(cycle));
      b.close_queue();
      a.start_cycle(noop_routine(), 2);
      a.close_queue();  // the activations may not have arrived yet: they are handed on, not lost
      a.wait();
      b.wait();
      CHECK(a.last_cycle().threads_forwarded == 2);
      CHECK(a.snapshot().n_to_activate == 0);
    }
    CHECK(calls == 100);
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
    b.wait();
    CHECK(calls == 1);
    gate.open();
    a.wait();
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
  b.wait();
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
        raw->wait();
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
    sub.wait();  // would hang if the dying publisher had not closed it
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
    pub.wait();
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
    p1.wait();
    CHECK(sub.mode() == TeamMode::RunningOpen);  // p2 has not closed yet
    CHECK(sub.snapshot().closes_pending == 1);
    p2.start_cycle(noop_routine(), 2);
    for (int i = 0; i < 4; ++i) p2.enqueue(item(i));
    p2.close_queue();
    p2.wait();
    sub.wait();
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
  p1.wait();
  p2.wait();
  sub.wait();
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
  pub.wait();
  CHECK(sub.mode() == TeamMode::RunningOpen);
  sub.enqueue(item(1));  // the external feeder
  sub.close_queue();
  sub.wait();
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
  const std::string msg = error_of([&] { pub.wait(); });
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
  pub.wait();  // pub's threads went Idle and were pushed to sub
  sub.close_queue();
  gate.open();
  const std::string msg = error_of([&] { sub.wait(); });
  CHECK(contains(msg, "'sub'"));
  CHECK(contains(msg, "thread publisher 'pub'"));
  CHECK(contains(msg, "ThreadBalance"));
  CHECK(sub.mode() == TeamMode::Idle);
}

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
    team.wait();
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
  down.wait();
  CHECK(down_calls == 3);
  // The team is Idle and reusable; the error was collected once.
  CHECK(team.mode() == TeamMode::Idle);
  team.wait();
  std::atomic<int> calls{0};
  down.start_cycle(noop_routine(), 1);
  team.start_cycle(counting_routine(calls), 2);
  for (int i = 0; i < 5; ++i) team.enqueue(item(i));
  team.close_queue();
  team.wait();
  down.wait();
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
  CHECK_THROWS_AS(team.wait(), Error);
  team.start_cycle(noop_routine(), 1);
  team.close_queue();
  team.wait();
}

TEST_CASE("Errors name the team and its state: empty routine, start while running, close in Idle") {
  ThreadTeam team("named", 1);
  CHECK(contains(error_of([&] { team.start_cycle(ActionRoutine("nothing", nullptr), 1); }), "empty action routine 'nothing'"));
  Gate gate;
  team.start_cycle(gated_routine(gate), 1);
  const std::string msg = error_of([&] { team.start_cycle(noop_routine(), 1); });
  CHECK(contains(msg, "'named' is RunningOpen"));
  CHECK(contains(msg, "call wait()"));
  team.close_queue();
  gate.open();
  team.wait();
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
  team.wait();
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
  team.start_cycle(ActionRoutine("reads_int", [](const ActionContext& ctx, DataItem&) { (void)ctx.parameters_as<int>(); }),
                   1, ActionParameters(Dt{2.0}));
  team.enqueue(item(0));
  team.close_queue();
  const std::string in_cycle = error_of([&] { team.wait(); });
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
    Kokkos::parallel_for(Kokkos::RangePolicy<HostTaskSpace>(ctx.host_space(), 0, n),
                         [=](int i) { x(i) = 2.0 * i; });
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
  team.wait();
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
  team.wait();
  CHECK(team.last_cycle().cycle == 1);
  CHECK(team.last_cycle().processed == 2);
}
