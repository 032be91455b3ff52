// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam: how many sleeping threads a cycle wakes (docs/thread-team.md, "Waking for items").
// Team threads that never poll (spin 0) sleep whenever they have nothing to do, so every event
// that reaches one asleep costs a counted wake-up; the rules are that an activation with nothing
// queued and the end of a cycle wake nobody, and that a cycle wakes no more threads than items.
#include "test_thread_team_support.hpp"

#include <korch/thread_team.hpp>

#include <doctest/doctest.h>

using namespace korch;
using namespace korch::test;

namespace {

TeamOptions sleeping_threads(bool waiter_works) {
  TeamOptions options;
  options.spin = std::chrono::microseconds(0);
  options.waiter_works = waiter_works;
  return options;
}

// Wake-ups over `cycles` cycles of `items` items each on a team of `threads` threads, all activated.
std::size_t wakeups_over(ThreadTeam& team, int cycles, int items) {
  std::size_t wakeups = 0;
  for (int c = 0; c < cycles; ++c) {
    team.start_cycle(noop_routine(), team.snapshot().n_max);
    for (int i = 0; i < items; ++i) team.enqueue(item(i));
    team.close_queue();
    watched_wait(team);
    REQUIRE(team.last_cycle().processed == static_cast<std::size_t>(items));
    wakeups += team.last_cycle().wakeups;
  }
  return wakeups;
}

}  // namespace

TEST_CASE("A cycle with no item wakes no sleeping thread, however many it activates") {
  ThreadTeam team("no_items", 4, sleeping_threads(true));
  CHECK(wakeups_over(team, 100, 0) == 0);
  CHECK(team.snapshot().n_idle == 4);
}

TEST_CASE("A cycle of one item wakes at most one thread, and its end wakes none") {
  // The caller does not run items, so a team thread must: one wake-up per cycle at most (none when
  // the thread is still awake from the last cycle), where waking every activated thread at the
  // start and every Waiting one at the end would cost up to seven.
  ThreadTeam team("one_item", 4, sleeping_threads(false));
  const int cycles = 200;
  CHECK(wakeups_over(team, cycles, 1) <= static_cast<std::size_t>(cycles));
}

TEST_CASE("A caller in wait() that runs the items of a short cycle wakes no more threads than there are items") {
  // The first item is sent to one Waiting thread, a later one to another if the first has taken
  // its item by then; the caller stands in for the rest (and takes an event back from a thread
  // that has not run yet). Waking every activated thread would cost four per cycle.
  ThreadTeam team("caller_runs", 4, sleeping_threads(true));
  const int cycles = 200;
  const int items = 2;
  CHECK(wakeups_over(team, cycles, items) <= static_cast<std::size_t>(cycles * items));
}

TEST_CASE("With a thread subscriber, the end of a cycle still wakes its Waiting threads to hand them on") {
  ThreadTeam publisher("publisher", 2, sleeping_threads(false));
  ThreadTeam subscriber("subscriber", 2, sleeping_threads(false));
  publisher.attach_thread_subscriber(subscriber);
  for (int c = 0; c < 20; ++c) {
    subscriber.start_cycle(noop_routine(), 0);
    publisher.start_cycle(noop_routine(), 2);
    publisher.enqueue(item(c));
    publisher.close_queue();
    watched_wait(publisher);
    subscriber.close_queue();
    watched_wait(subscriber);
    REQUIRE(publisher.last_cycle().threads_forwarded == 2);
    REQUIRE(subscriber.last_cycle().threads_received == 2);
  }
}
