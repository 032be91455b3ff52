// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Helpers shared by the thread-team suites: items that count who processed them, an observer that
// checks the EFSM invariants at every transition, a gate to hold routines, polling with a deadline,
// and watched_wait(), a team's wait() under the watchdog (test_watchdog.hpp) with a bound of its own.
#pragma once

#include <korch/thread_team.hpp>

#include <doctest/doctest.h>

#include "test_watchdog.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace korch::test {

inline constexpr int max_teams = 16;

// An item that remembers how often each team (by slot) applied its routine to it.
struct CountedItem : DataItem {
  explicit CountedItem(int id_) : id(id_) {
    for (auto& h : hits) h.store(0, std::memory_order_relaxed);
  }
  std::string describe() const override { return "item #" + std::to_string(id); }
  int id;
  std::array<std::atomic<int>, max_teams> hits;
};

inline std::shared_ptr<CountedItem> item(int id) { return std::make_shared<CountedItem>(id); }

inline ActionRoutine noop_routine(std::string name = "noop") {
  return ActionRoutine(std::move(name), [](const ActionContext&, DataItem&) {});
}

// Counts calls; marks CountedItems with `slot`.
inline ActionRoutine counting_routine(std::atomic<int>& calls, int slot = 0, std::string name = "count") {
  return ActionRoutine(std::move(name), [&calls, slot](const ActionContext&, DataItem& it) {
    if (auto* c = dynamic_cast<CountedItem*>(&it)) c->hits[slot].fetch_add(1, std::memory_order_relaxed);
    calls.fetch_add(1, std::memory_order_relaxed);
  });
}

// Polls `done` until it holds or 10 s pass (then the check fails instead of hanging).
inline bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// team.wait() on the caller's thread, under the watchdog.
inline void watched_wait(ThreadTeam& team) {
  const Watchdog::Scope scope("wait() of team '" + team.name() + "'");
  team.wait();
}

// Routines that call gate.pass() block until gate.open().
class Gate {
 public:
  void pass() {
    std::unique_lock<std::mutex> lk(m_);
    ++inside_;
    cv_.notify_all();
    cv_.wait(lk, [this] { return open_; });
    --inside_;
  }
  void open() {
    std::lock_guard<std::mutex> lk(m_);
    open_ = true;
    cv_.notify_all();
  }
  int inside() {
    std::lock_guard<std::mutex> lk(m_);
    return inside_;
  }
  bool wait_inside(int n) {
    std::unique_lock<std::mutex> lk(m_);
    return cv_.wait_for(lk, std::chrono::seconds(10), [&] { return inside_ >= n; });
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
  int inside_ = 0;
};

inline ActionRoutine gated_routine(Gate& gate, std::string name = "gated") {
  return ActionRoutine(std::move(name), [&gate](const ActionContext&, DataItem&) { gate.pass(); });
}

// Checks the EFSM's invariants at every transition of the teams it observes and keeps the
// transitions in order (per team; a shared recorder serializes with its own mutex).
class Recorder {
 public:
  struct Entry {
    std::string team;
    TeamTransition t;
  };

  TransitionObserver observer_for(const ThreadTeam& team) {
    const std::string name = team.name();
    const unsigned n_max = team.n_max();
    return [this, name, n_max](const TeamTransition& t) {
      std::lock_guard<std::mutex> lk(m_);
      check(name, n_max, t);
      entries_.push_back(Entry{name, t});
    };
  }
  void observe(ThreadTeam& team) { team.set_transition_observer(observer_for(team)); }

  std::vector<Entry> entries() {
    std::lock_guard<std::mutex> lk(m_);
    return entries_;
  }
  std::vector<TeamTransition> of(const std::string& team) {
    std::lock_guard<std::mutex> lk(m_);
    std::vector<TeamTransition> out;
    for (const auto& e : entries_) {
      if (e.team == team) out.push_back(e.t);
    }
    return out;
  }
  std::vector<std::string> violations() {
    std::lock_guard<std::mutex> lk(m_);
    return violations_;
  }
  void clear() {
    std::lock_guard<std::mutex> lk(m_);
    entries_.clear();
  }

 private:
  void check(const std::string& team, unsigned n_max, const TeamTransition& t) {
    auto fail = [&](const char* rule) {
      violations_.push_back(team + " after " + to_string(t.event) + " in " + to_string(t.mode) + ": " + rule +
                            " (N_i " + std::to_string(t.n_idle) + ", N_w " + std::to_string(t.n_waiting) + ", N_c " +
                            std::to_string(t.n_computing) + ", N_Q " + std::to_string(t.n_queued) + ", pending " +
                            std::to_string(t.n_to_activate) + ")");
    };
    if (t.n_idle + t.n_waiting + t.n_computing != n_max) fail("N_i + N_w + N_c != N_max");
    if (t.n_to_activate > t.n_idle) fail("more activations pending than Idle threads");
    switch (t.mode) {
      case TeamMode::Idle:
        if (t.n_queued != 0) fail("Idle with a non-empty queue");
        if (t.n_idle != n_max) fail("Idle with a non-Idle thread");
        if (t.n_to_activate != 0) fail("Idle with activations in flight");
        break;
      case TeamMode::RunningOpen: break;
      case TeamMode::RunningClosed:
        if (t.n_queued == 0) fail("RunningClosed with an empty queue");
        break;
      case TeamMode::RunningNoMoreWork:
        if (t.n_queued != 0) fail("RunningNoMoreWork with a non-empty queue");
        if (t.n_idle == n_max) fail("RunningNoMoreWork with every thread Idle");
        break;
    }
  }

  std::mutex m_;
  std::vector<Entry> entries_;
  std::vector<std::string> violations_;
};

// Checks the invariants that a snapshot taken at any moment must satisfy.
inline void check_snapshot(const TeamSnapshot& s) {
  CHECK(s.n_idle + s.n_waiting + s.n_computing == s.n_max);
  CHECK(s.n_to_activate <= s.n_idle);
  if (s.mode == TeamMode::Idle) {
    CHECK(s.n_queued == 0);
    CHECK(s.n_idle == s.n_max);
  }
  if (s.mode == TeamMode::RunningClosed) CHECK(s.n_queued > 0);
  if (s.mode == TeamMode::RunningNoMoreWork) {
    CHECK(s.n_queued == 0);
    CHECK(s.n_idle < s.n_max);
  }
}

}  // namespace korch::test
