// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam: a team thread moves off the core of the thread that woke it (waker_core.hpp,
// docs/thread-team.md, "Waiting"). The move must land the thread on another core it may run on and
// leave the cores it may run on as they were; a thread that may run on one core only stays.
#include "waker_core.hpp"

#include <doctest/doctest.h>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <thread>

namespace {

cpu_set_t allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
  return set;
}

}  // namespace

TEST_CASE("A thread moved off its waker's core runs on another of its cores, which stay as they were") {
  const cpu_set_t before = allowed_cores();
  if (CPU_COUNT(&before) < 2) {
    MESSAGE("this process may run on one core only: nothing to move to");
    return;
  }
  std::thread t([] {
    const cpu_set_t own = allowed_cores();
    korch::detail::WakerCore waker_core;
    waker_core.attach();
    const int here = sched_getcpu();
    REQUIRE(here >= 0);
    CHECK(waker_core.move_off(here));
    CHECK(sched_getcpu() != here);
    CHECK(CPU_ISSET(sched_getcpu(), &own));
    const cpu_set_t after = allowed_cores();
    CHECK(CPU_EQUAL(&after, &own));
    // At most one move per millisecond: a second one within it is refused and moves nothing. On a
    // loaded machine the thread may lose its core between the two calls for longer than that, so
    // the pair is timed and repeated until one pair falls within the millisecond.
    bool timely = false;
    for (int attempt = 0; attempt < 400 && !timely; ++attempt) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the next move is allowed again
      const auto first = std::chrono::steady_clock::now();
      const int from = sched_getcpu();
      if (!waker_core.move_off(from)) continue;
      const bool again = waker_core.move_off(sched_getcpu());
      if (std::chrono::steady_clock::now() - first >= std::chrono::milliseconds(1)) continue;
      timely = true;
      CHECK_FALSE(again);
    }
    CHECK(timely);
    const cpu_set_t still = allowed_cores();
    CHECK(CPU_EQUAL(&still, &own));
  });
  t.join();
}

TEST_CASE("A thread that may run on one core only stays where it is") {
  std::thread t([] {
    const int here = sched_getcpu();
    REQUIRE(here >= 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(here, &one);
    REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0);
    korch::detail::WakerCore waker_core;
    waker_core.attach();
    CHECK_FALSE(waker_core.move_off(here));
    CHECK(sched_getcpu() == here);
    const cpu_set_t after = allowed_cores();
    CHECK(CPU_EQUAL(&after, &one));
  });
  t.join();
}

TEST_CASE("A core the thread may not run on is not moved off") {
  std::thread t([] {
    korch::detail::WakerCore waker_core;
    waker_core.attach();
    CHECK_FALSE(waker_core.move_off(-1));
    CHECK_FALSE(waker_core.move_off(CPU_SETSIZE));
  });
  t.join();
}
#endif
