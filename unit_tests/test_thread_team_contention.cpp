// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam on a contended core (core_contention.hpp, docs/thread-team.md, "Leave the event to the
// caller"): a team thread that shares its core with a busy thread first leaves its event to the
// caller that feeds the team. The evidence must come and go as documented, and leaving the event
// must never keep items from running when no caller comes to wait(); nor must a thread that naps
// there instead of sleeping until woken (docs/thread-team.md, "Nap on a contended core").
#include "core_contention.hpp"
#include "thread_team_internals.hpp"

#include "test_thread_team_support.hpp"

#include <korch/thread_team.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

using namespace korch;
using namespace korch::test;
using korch::detail::CoreContention;
using korch::detail::PollClock;
using namespace std::chrono_literals;

TEST_CASE("A core counts as contended after a slow wake-up or a descheduled poll, and free again later") {
  const PollClock::time_point t0 = PollClock::now();
  CoreContention c;
  CHECK_FALSE(c.contended(t0));
  c.note_wakeup(t0, t0 + 50us);  // a prompt wake-up (a halted virtual core included) is no evidence
  CHECK_FALSE(c.contended(t0 + 60us));
  c.note_wakeup(t0, t0 + 1ms);
  CHECK(c.contended(t0 + 2ms));
  CHECK(c.contended(t0 + 40ms));
  CHECK_FALSE(c.contended(t0 + 1ms + 60ms));

  CoreContention d;
  d.note_descheduled_poll(t0);
  CHECK(d.contended(t0 + 10ms));
  CHECK_FALSE(d.contended(t0 + 60ms));
}

#if defined(__linux__)
namespace {

cpu_set_t only(int cpu) {
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return one;
}

// A thread that spins on one core for as long as it lives.
class Spinner {
 public:
  explicit Spinner(int cpu)
      : thread_([this, cpu] {
          const cpu_set_t one = only(cpu);
          pthread_setaffinity_np(pthread_self(), sizeof one, &one);
          while (!stop_.load(std::memory_order_relaxed)) {
          }
        }) {}
  ~Spinner() {
    stop_ = true;
    thread_.join();
  }
  Spinner(const Spinner&) = delete;
  Spinner& operator=(const Spinner&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The first core this process may run on.
int first_allowed_cpu() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  REQUIRE(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &allowed)) return c;
  }
  FAIL("no allowed core");
  return -1;
}

// A team created on a thread allowed `cpu` only: its threads inherit that and share the core with
// a Spinner there. The caller runs wherever it may.
std::unique_ptr<ThreadTeam> team_on_core(int cpu, const char* name, unsigned n_max, TeamOptions options = {}) {
  std::unique_ptr<ThreadTeam> team;
  std::thread creator([&] {
    const cpu_set_t one = only(cpu);
    REQUIRE(pthread_setaffinity_np(pthread_self(), sizeof one, &one) == 0);
    team = std::make_unique<ThreadTeam>(name, n_max, options);
  });
  creator.join();
  return team;
}

// A cycle of n_items that the caller waits for; every item must run exactly once.
void waited_cycle(ThreadTeam& team, const ActionRoutine& routine, unsigned n_active, int n_items) {
  std::vector<std::shared_ptr<CountedItem>> items;
  team.start_cycle(routine, n_active);
  for (int i = 0; i < n_items; ++i) {
    items.push_back(item(i));
    team.enqueue(items.back());
  }
  team.close_queue();
  watched_wait(team);
  for (const auto& it : items) CHECK(it->hits[0].load() == 1);
}

}  // namespace

TEST_CASE("A team thread on a busy core runs the items itself when no caller comes to wait()") {
  const int busy_cpu = first_allowed_cpu();
  const Spinner spinner(busy_cpu);
  std::unique_ptr<ThreadTeam> team = team_on_core(busy_cpu, "contended", 1);
  std::atomic<int> calls{0};
  const ActionRoutine routine = counting_routine(calls);
  // Long enough for several scheduler time slices: the evidence is what the thread sees of them.
  const auto until = std::chrono::steady_clock::now() + 500ms;
  for (int round = 0; round < 40 || std::chrono::steady_clock::now() < until; ++round) {
    // Cycles the caller waits for: the thread gathers its evidence; every item runs once.
    for (int c = 0; c < 20; ++c) waited_cycle(*team, routine, 1, 5);
    // A cycle whose caller does not wait: the thread must take its event after a moment.
    const int before = calls.load();
    team->start_cycle(routine, 1);
    for (int i = 0; i < 3; ++i) team->enqueue(item(i));
    CHECK(eventually([&] { return calls.load() == before + 3; }));
    team->close_queue();
    watched_wait(*team);
  }
  team.reset();
}
#endif

#if defined(__linux__)
TEST_CASE(
    "A team thread that naps on a busy core still runs the items of a caller that does not wait, and "
    "its team is destroyed without waiting for the nap") {
  const int busy_cpu = first_allowed_cpu();
  const Spinner spinner(busy_cpu);
  TeamOptions options;
  options.contended_nap = 100ms;  // long, so that a nap that ignored its events would show
  options.naps_per_cycle = 0;     // ... although the cycles are short
  std::unique_ptr<ThreadTeam> team = team_on_core(busy_cpu, "napping", 2, options);
  std::atomic<int> calls{0};
  const ActionRoutine routine = counting_routine(calls);
  const auto until = std::chrono::steady_clock::now() + 300ms;
  for (int round = 0; round < 10 || std::chrono::steady_clock::now() < until; ++round) {
    // Cycles the caller waits for: the threads gather evidence and nap; the caller takes their events.
    for (int c = 0; c < 20; ++c) waited_cycle(*team, routine, 2, 7);
    // No caller in wait(): the napping threads find the items when their naps end.
    const int before = calls.load();
    const auto t0 = std::chrono::steady_clock::now();
    team->start_cycle(routine, 2);
    for (int i = 0; i < 3; ++i) team->enqueue(item(i));
    CHECK(eventually([&] { return calls.load() == before + 3; }));
    CHECK(std::chrono::steady_clock::now() - t0 < 2s);  // a nap or two, not a lost event
    team->close_queue();
    watched_wait(*team);
  }
  const auto t0 = std::chrono::steady_clock::now();
  team.reset();  // its threads nap: the terminate signal wakes them, the destructor does not wait
  CHECK(std::chrono::steady_clock::now() - t0 < 100ms);
}

TEST_CASE(
    "A team of short cycles does not nap on a busy core: a caller that does not wait sees its items run at once") {
  const int busy_cpu = first_allowed_cpu();
  const Spinner spinner(busy_cpu);
  TeamOptions options;
  // A nap through the start of a cycle would delay its items by most of a second: far beyond the
  // slow wake-ups of an oversubscribed machine, which may wait through several scheduler slices.
  options.contended_nap = 1s;
  std::unique_ptr<ThreadTeam> team = team_on_core(busy_cpu, "short cycles", 2, options);
  REQUIRE(options.naps_per_cycle > 0);  // the default: the cycles below are far shorter than naps
  std::atomic<int> calls{0};
  const ActionRoutine routine = counting_routine(calls);
  std::vector<std::chrono::steady_clock::duration> delays;
  const auto until = std::chrono::steady_clock::now() + 500ms;
  for (int round = 0; round < 30 || std::chrono::steady_clock::now() < until; ++round) {
    // Waited cycles give evidence and are timed; the cycle below never is (it lasts until the test
    // has seen its items run, a long cycle), so that a round fills one timing period.
    for (std::uint64_t c = 1; c < korch::detail::tiny_items_timed_every; ++c) waited_cycle(*team, routine, 2, 7);
    const int before = calls.load();
    const auto t0 = std::chrono::steady_clock::now();
    team->start_cycle(routine, 2);
    for (int i = 0; i < 3; ++i) team->enqueue(item(i));
    CHECK(eventually([&] { return calls.load() == before + 3; }));
    if (round > 0) delays.push_back(std::chrono::steady_clock::now() - t0);  // the first timed cycle started threads
    team->close_queue();
    watched_wait(*team);
  }
  // The threads slept until woken: the items waited for a wake-up on the busy core, never for the
  // end of a nap.
  const auto slowest = *std::max_element(delays.begin(), delays.end());
  INFO("slowest of ", delays.size(), " rounds: ", std::chrono::duration<double, std::milli>(slowest).count(), " ms");
  CHECK(slowest < 300ms);
}
#endif
