// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam destruction (docs/thread-team.md, "Destruction"): threads parked when their team is
// destroyed are not waited for, yet every one of them ends, and nothing of the team is used after.
#include "test_thread_team_support.hpp"

#include <korch/thread_team.hpp>

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>
#include <vector>

using namespace korch;
using namespace korch::test;

namespace {

// Threads of this process (Linux: one entry per thread in /proc/self/task); -1 elsewhere.
long threads_of_this_process() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/task", ec);
  if (ec) return -1;
  long n = 0;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) ++n;
  return n;
}

// The thread count once it has stopped changing: threads of teams destroyed before may still be
// ending (they are not waited for).
long settled_thread_count() {
  long last = threads_of_this_process();
  for (int i = 0; i < 400; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const long now = threads_of_this_process();
    if (now == last) return now;
    last = now;
  }
  return last;
}

// Whether the process is back to at most `n` threads within a generous deadline (the threads that
// were not waited for still need a core to end). A read while threads end may miss one that still
// runs, so two reads in a row must find at most `n`.
bool threads_return_to(long n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int in_a_row = 0;
  while (in_a_row < 2 && std::chrono::steady_clock::now() < deadline) {
    in_a_row = threads_of_this_process() <= n ? in_a_row + 1 : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return in_a_row == 2;
}

TeamOptions sleeping_threads() {
  TeamOptions options;
  options.spin = std::chrono::microseconds(0);  // out of work, a thread sleeps at once
  return options;
}

void run_cycle(ThreadTeam& team, int items) {
  team.start_cycle(noop_routine(), team.snapshot().n_max);
  for (int i = 0; i < items; ++i) team.enqueue(item(i));
  team.close_queue();
  watched_wait(team);
}

}  // namespace

TEST_CASE("Destroying teams whose threads sleep leaves no thread behind: each ends on its own") {
  const long before = settled_thread_count();
  if (before < 0) return;  // no /proc: nothing to count
  {
    std::vector<std::unique_ptr<ThreadTeam>> teams;
    for (int t = 0; t < 16; ++t) {
      teams.push_back(std::make_unique<ThreadTeam>("asleep " + std::to_string(t), 4, sleeping_threads()));
      run_cycle(*teams.back(), 8);
    }
    CHECK(threads_of_this_process() >= 16 * 4);
    // Destroyed in both orders, a linked pair included.
    teams[1]->attach_work_subscriber(*teams[2]);
    teams[2]->start_cycle(noop_routine(), 1);
    teams[1]->start_cycle(noop_routine(), 1);
    teams[1]->enqueue(item(1));
    teams[1]->close_queue();
    watched_wait(*teams[1]);
    watched_wait(*teams[2]);
    for (std::size_t t = 0; t < teams.size(); t += 2) teams[t].reset();
    while (!teams.empty()) teams.pop_back();
  }
  CHECK(threads_return_to(before));
}

TEST_CASE("A team destroyed with threads asleep, polling and computing ends every one of them") {
  const long before = settled_thread_count();
  for (int round = 0; round < 50; ++round) {
    TeamOptions options;
    options.spin = std::chrono::microseconds(round % 3 == 0 ? 0 : 200);
    auto team = std::make_unique<ThreadTeam>("mixed", 3, options);
    run_cycle(*team, round % 5);
    if (round % 2 == 0) {
      // A cycle still running: threads computing or parked Waiting when the team goes.
      team->start_cycle(noop_routine(), 2);
      for (int i = 0; i < 20; ++i) team->enqueue(item(i));
    }
    team.reset();
  }
  // No hang and no use after free (the sanitizer builds run this too), and no thread left over.
  if (before >= 0) CHECK(threads_return_to(before));
}

TEST_CASE("A team destroyed right after construction ends threads that may not have run yet") {
  const long before = settled_thread_count();
  for (int round = 0; round < 100; ++round) {
    TeamOptions options;
    options.spin = std::chrono::microseconds(round % 2 == 0 ? 0 : 50);
    ThreadTeam team("short-lived", 1 + round % 4, options);
  }
  if (before >= 0) CHECK(threads_return_to(before));
}
