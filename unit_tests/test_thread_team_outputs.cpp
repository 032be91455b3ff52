// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam: what a team hands to its work subscriber — the item itself, or what an emitting
// routine emitted, with its end-of-cycle step — and the errors when outputs would be lost; and
// the caller in wait() standing in for a parked thread of the cycle.
#include "test_error_support.hpp"
#include "test_thread_team_support.hpp"

#include <korch/error.hpp>
#include <korch/thread_team.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

using namespace korch;
using namespace korch::test;

namespace {
// Emits `copies` new items per input, numbered input * 10 + k.
ActionRoutine splitting_routine(int copies, std::atomic<int>& ends) {
  return ActionRoutine::emitting(
      "split",
      [copies](const ActionContext& ctx, DataItem& it) {
        const int id = static_cast<CountedItem&>(it).id;
        for (int k = 0; k < copies; ++k) ctx.emit(item(id * 10 + k));
      },
      [&ends](const ActionContext& ctx) {
        ends.fetch_add(1);
        ctx.emit(item(-1));  // the end-of-cycle output, e.g. an aggregator's partial packet
      });
}

// Collects the ids it sees.
struct Collector {
  std::mutex mutex;
  std::multiset<int> ids;
  ActionRoutine routine() {
    return ActionRoutine("collect", [this](const ActionContext&, DataItem& it) {
      std::lock_guard<std::mutex> lock(mutex);
      ids.insert(static_cast<CountedItem&>(it).id);
    });
  }
};
}  // namespace

TEST_CASE("Outputs: an emitting routine's items and its end-of-cycle output reach the subscriber, once each cycle") {
  for (unsigned threads : {1U, 2U, 3U}) {
    CAPTURE(threads);
    ThreadTeam a("splitter", 3), b("consumer", 2);
    a.attach_work_subscriber(b);
    std::atomic<int> ends{0};
    for (int cycle = 0; cycle < 20; ++cycle) {
      Collector seen;
      b.start_cycle(seen.routine(), 2);
      a.start_cycle(splitting_routine(3, ends), threads);
      for (int i = 1; i <= 7; ++i) a.enqueue(item(i));
      a.close_queue();
      watched_wait(a);
      watched_wait(b);  // closed by a after its end-of-cycle output
      std::multiset<int> expected{-1};
      for (int i = 1; i <= 7; ++i)
        for (int k = 0; k < 3; ++k) expected.insert(i * 10 + k);
      CHECK(seen.ids == expected);
      const CycleReport r = a.last_cycle();
      CHECK(r.processed == 7);
      CHECK(r.forwarded == 22);
      CHECK(r.undelivered == 0);
      CHECK(b.last_cycle().processed == 22);
    }
    CHECK(ends.load() == 20);
  }
}

TEST_CASE(
    "Outputs: the end-of-cycle step runs in every cycle also while threads forward themselves to a thread subscriber") {
  // A thread that goes Idle forwards itself to the thread subscriber with the mutex released while
  // still counted as Computing; the last thread with an item must not take it for a busy one.
  ThreadTeam a("splitter", 3), b("consumer", 3), c("spare", 3);
  a.attach_work_subscriber(b);
  a.attach_thread_subscriber(c);
  std::atomic<int> ends{0};
  for (int cycle = 0; cycle < 200; ++cycle) {
    CAPTURE(cycle);
    Collector seen;
    c.start_cycle(noop_routine(), 0);
    b.start_cycle(seen.routine(), 1);
    a.start_cycle(splitting_routine(1, ends), 3);
    for (int i = 1; i <= 2; ++i) a.enqueue(item(i));
    a.close_queue();
    watched_wait(a);
    watched_wait(b);
    c.close_queue();
    watched_wait(c);
    REQUIRE(ends.load() == cycle + 1);
    CHECK(seen.ids == std::multiset<int>{-1, 10, 20});
  }
}

TEST_CASE("Outputs: the end-of-cycle step runs only in cycles whose routine ran, and not after a failure") {
  ThreadTeam a("splitter", 2), b("consumer", 1);
  a.attach_work_subscriber(b);
  std::atomic<int> ends{0};
  Collector seen;
  for (int i = 0; i < 50; ++i) {  // no items: however activations and the close interleave
    b.start_cycle(seen.routine(), 1);
    a.start_cycle(splitting_routine(1, ends), 2);
    a.close_queue();
    watched_wait(a);
    watched_wait(b);
  }
  CHECK(ends.load() == 0);
  CHECK(seen.ids.empty());

  // A routine that throws fails the cycle: the end-of-cycle step is skipped, the subscriber closed.
  const ActionRoutine failing = ActionRoutine::emitting(
      "fail", [](const ActionContext&, DataItem&) { throw std::runtime_error("broken input"); },
      [&ends](const ActionContext&) { ends.fetch_add(1); });
  b.start_cycle(seen.routine(), 1);
  a.start_cycle(failing, 1);
  a.enqueue(item(1));
  a.close_queue();
  CHECK(contains(error_of([&] { watched_wait(a); }), "broken input"));
  watched_wait(b);
  CHECK(ends.load() == 0);
}

TEST_CASE("Outputs: a throwing end-of-cycle step fails the cycle with the routine's name; the team stays usable") {
  ThreadTeam a("aggregator", 1);
  const ActionRoutine r = ActionRoutine::emitting(
      "aggregate", [](const ActionContext&, DataItem&) {},
      [](const ActionContext&) { throw Error("2 blocks still incomplete"); });
  a.start_cycle(r, 1);
  a.enqueue(item(1));
  a.close_queue();
  const std::string e = error_of([&] { watched_wait(a); });
  CHECK(contains(e, "end-of-cycle step of routine 'aggregate'"));
  CHECK(contains(e, "2 blocks still incomplete"));
  a.start_cycle(noop_routine(), 1);
  a.close_queue();
  watched_wait(a);
}

TEST_CASE("Outputs: emitted items with no work subscriber, and emit() from a plain routine, are errors") {
  ThreadTeam a("alone", 1);
  std::atomic<int> ends{0};
  a.start_cycle(splitting_routine(2, ends), 1);
  a.enqueue(item(1));
  a.close_queue();
  const std::string lost = error_of([&] { watched_wait(a); });
  CHECK(contains(lost, "routine 'split' emitted 2 item(s) but the team has no work subscriber"));
  CHECK(a.last_cycle().undelivered == 2);

  const ActionRoutine plain("plain", [](const ActionContext& ctx, DataItem&) { ctx.emit(item(5)); });
  a.start_cycle(plain, 1);
  a.enqueue(item(1));
  a.close_queue();
  CHECK(contains(error_of([&] { watched_wait(a); }), "make it with ActionRoutine::emitting"));
}

TEST_CASE("Waiter works: the caller in wait() runs items in a parked thread's place, never more threads than asked") {
  for (const bool works : {true, false}) {
    CAPTURE(works);
    TeamOptions options;
    options.spin = std::chrono::microseconds(0);  // team threads always sleep: the caller can stand in
    options.waiter_works = works;
    ThreadTeam team("stand-in", 3, options);
    const auto caller = std::this_thread::get_id();
    std::atomic<int> running{0}, most_running{0}, on_caller{0}, calls{0};
    std::atomic<unsigned> busy_indices{0};
    std::atomic<int> index_clash{0};
    const ActionRoutine r("watch", [&](const ActionContext& ctx, DataItem&) {
      const unsigned bit = 1U << ctx.thread_index();
      if (busy_indices.fetch_or(bit) & bit) ++index_clash;  // two runs as the same team thread at once
      const int now = ++running;
      int seen = most_running.load();
      while (now > seen && !most_running.compare_exchange_weak(seen, now)) {
      }
      if (std::this_thread::get_id() == caller) ++on_caller;
      ++calls;
      busy_indices.fetch_and(~bit);
      --running;
    });
    for (int cycle = 0; cycle < 300; ++cycle) {
      team.start_cycle(r, 2);
      for (int i = 0; i < 4; ++i) team.enqueue(item(i));
      team.close_queue();
      watched_wait(team);
    }
    CHECK(calls.load() == 1200);
    CHECK(most_running.load() <= 2);  // the two activated threads, the caller standing in for one
    CHECK(index_clash.load() == 0);
    if (works) {
      CHECK(on_caller.load() > 0);
    } else {
      CHECK(on_caller.load() == 0);
    }
  }
}

TEST_CASE("Waiter joins: the caller works as one more thread of the cycle, never beyond N_max") {
  TeamOptions options;
  options.waiter_joins = true;
  ThreadTeam team("joined", 2, options);
  const auto caller = std::this_thread::get_id();
  std::atomic<int> running{0}, most_running{0}, on_caller{0}, calls{0};
  const ActionRoutine r("watch", [&](const ActionContext&, DataItem&) {
    const int now = ++running;
    int seen = most_running.load();
    while (now > seen && !most_running.compare_exchange_weak(seen, now)) {
    }
    if (std::this_thread::get_id() == caller) ++on_caller;
    volatile unsigned x = 1;
    for (int i = 0; i < 2000; ++i) x = x * 3U + 1U;
    ++calls;
    --running;
  });
  for (const unsigned active : {0U, 1U}) {
    for (int cycle = 0; cycle < 200; ++cycle) {
      team.start_cycle(r, active);
      for (int i = 0; i < 4; ++i) team.enqueue(item(i));
      team.close_queue();
      watched_wait(team);  // with 0 active threads, only the joining caller can run the items
      CHECK(team.snapshot().n_idle == 2);
    }
  }
  CHECK(calls.load() == 1600);
  CHECK(most_running.load() <= 2);
  CHECK(on_caller.load() > 0);
}
