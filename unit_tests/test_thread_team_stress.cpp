// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Randomized stress of ThreadTeam: random chains and fans of teams linked as work and thread
// publishers/subscribers, random thread counts, random item counts (zero included), random timing.
//
//   KORCH_STRESS_SCALE=10   ten times as many cycles (default 1: 10,000 cycles, a few seconds)
//   KORCH_STRESS_SEED=123   another seed (the seed in use is printed)
#include "test_thread_team_support.hpp"

#include <korch/error.hpp>
#include <korch/thread_team.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace korch;
using namespace korch::test;

namespace {

double stress_scale() {
  const char* s = std::getenv("KORCH_STRESS_SCALE");
  const double v = s ? std::atof(s) : 1.0;
  return v > 0 ? v : 1.0;
}

std::uint64_t stress_seed(std::uint64_t fallback) {
  const char* s = std::getenv("KORCH_STRESS_SEED");
  return s ? std::strtoull(s, nullptr, 10) : fallback;
}

// One random configuration of teams. Edges go from lower to higher index, so the publisher graphs
// are acyclic; thread budgets respect Req ThreadBalance: a team never gets more threads per cycle
// (its own activations, the client's increase_thread_count and threads pushed by its publishers)
// than it has.
struct Config {
  int k = 0;
  std::vector<std::unique_ptr<ThreadTeam>> teams;
  std::vector<int> n_max, work_sub, thread_sub;
  std::vector<int> in;      // most threads pushed to the team per cycle
  std::vector<int> budget;  // most threads the client activates per cycle (start + increase)
  std::vector<bool> has_work_pub, external;

  Config(std::mt19937_64& rng, int round) {
    auto uni = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    k = uni(1, 5);
    n_max.resize(k);
    work_sub.assign(k, -1);
    thread_sub.assign(k, -1);
    in.assign(k, 0);
    budget.assign(k, 0);
    has_work_pub.assign(k, false);
    external.assign(k, false);
    for (int i = 0; i < k; ++i) {
      n_max[i] = uni(1, 3);
      TeamOptions options;
      const int spin = uni(0, 2);
      options.spin = std::chrono::microseconds(spin == 0 ? 0 : spin == 1 ? 2 : 20);
      // Naps where the process's own threads contend: off, the default, and long enough that an
      // event left to a nap's end would show as a slow suite, and a lost one as a hang.
      const int nap = uni(0, 2);
      options.contended_nap = std::chrono::microseconds(nap == 0 ? 0 : nap == 1 ? 1000 : 3000);
      options.naps_per_cycle = 0;  // naps however short this suite's cycles
      teams.push_back(std::make_unique<ThreadTeam>("t" + std::to_string(round) + "." + std::to_string(i),
                                                   static_cast<unsigned>(n_max[i]), options));
    }
    for (int i = 0; i < k; ++i) {
      // Threads: in[i] is final here (publishers have lower indices).
      budget[i] = uni(in[i] == 0 ? 1 : 0, n_max[i] - in[i]);
      const int out = in[i] + budget[i];
      if (i + 1 < k && uni(0, 9) < 4) {
        std::vector<int> fits;
        for (int j = i + 1; j < k; ++j) {
          if (in[j] + out <= n_max[j]) fits.push_back(j);
        }
        if (!fits.empty()) {
          const int j = fits[uni(0, static_cast<int>(fits.size()) - 1)];
          thread_sub[i] = j;
          in[j] += out;
          teams[i]->attach_thread_subscriber(*teams[j]);
        }
      }
      if (i + 1 < k && uni(0, 9) < 6) {
        const int j = uni(i + 1, k - 1);
        work_sub[i] = j;
        has_work_pub[j] = true;
        teams[i]->attach_work_subscriber(*teams[j]);
      }
    }
    for (int i = 0; i < k; ++i) {
      if (has_work_pub[i] && uni(0, 9) < 2) {
        external[i] = true;
        teams[i]->add_external_work_publisher();
      }
    }
  }

  // The teams an item enqueued with team s passes through.
  std::vector<int> path_from(int s) const {
    std::vector<int> p;
    for (int t = s; t >= 0; t = work_sub[t]) p.push_back(t);
    return p;
  }
};

// Routines of random length. (Not sched_yield: on a loaded machine each yield gives the core to a
// CPU-bound thread for its whole time slice, milliseconds, which no runtime can avoid, and the
// suite must also run beside other load.)
struct Work {
  enum Kind { none, spin, long_spin };
  static void some(Kind kind, unsigned salt) {
    if (kind == none) return;
    const unsigned n = kind == spin ? 200U : 200U + (salt * 2654435761U) % 4000U;
    volatile unsigned x = salt;
    for (unsigned i = 0; i < n; ++i) x = x * 1664525U + 1013904223U;
  }
};

ActionRoutine marking_routine(int slot, Work::Kind kind, double fail_probability = 0.0) {
  return ActionRoutine(
      "mark" + std::to_string(slot), [slot, kind, fail_probability](const ActionContext& ctx, DataItem& it) {
        auto& c = static_cast<CountedItem&>(it);
        c.hits[slot].fetch_add(1, std::memory_order_relaxed);
        Work::some(kind, static_cast<unsigned>(c.id) + ctx.thread_index());
        if (fail_probability > 0) {
          // A deterministic pseudo-random choice per (item, team).
          const unsigned h = (static_cast<unsigned>(c.id) * 2654435761U) ^ (static_cast<unsigned>(slot) * 40503U);
          if ((h % 1000U) < static_cast<unsigned>(fail_probability * 1000))
            throw std::runtime_error("injected failure");
        }
      });
}

// Threads are conserved in every round: each team with a thread subscriber hands on exactly the
// threads it activated itself and was given (Spec ForwardThreads, IdleToIdle), and each team
// receives exactly what its thread publishers handed on. Returns what does not add up.
std::vector<std::string> unbalanced_threads(const Config& cfg, const std::vector<int>& activated) {
  std::vector<std::string> problems;
  std::vector<std::size_t> from_publishers(static_cast<std::size_t>(cfg.k), 0);
  std::vector<CycleReport> reports;
  for (const auto& team : cfg.teams) reports.push_back(team->last_cycle());
  for (int i = 0; i < cfg.k; ++i) {
    const CycleReport& rep = reports[static_cast<std::size_t>(i)];
    const std::size_t given = static_cast<std::size_t>(activated[static_cast<std::size_t>(i)]) + rep.threads_received;
    const int sub = cfg.thread_sub[static_cast<std::size_t>(i)];
    const std::size_t expected = sub >= 0 ? given : 0;
    if (rep.threads_forwarded != expected) {
      problems.push_back("team " + std::to_string(i) + " (routine " + rep.routine + ", cycle " +
                         std::to_string(rep.cycle) + ") handed on " + std::to_string(rep.threads_forwarded) +
                         " threads, expected " + std::to_string(expected) + " (" +
                         std::to_string(activated[static_cast<std::size_t>(i)]) + " activated by the client, " +
                         std::to_string(rep.threads_received) + " received)");
    }
    if (sub >= 0) from_publishers[static_cast<std::size_t>(sub)] += rep.threads_forwarded;
  }
  for (int j = 0; j < cfg.k; ++j) {
    const CycleReport& rep = reports[static_cast<std::size_t>(j)];
    if (rep.threads_received != from_publishers[static_cast<std::size_t>(j)]) {
      problems.push_back("team " + std::to_string(j) + " received " + std::to_string(rep.threads_received) +
                         " threads, its thread publishers handed on " +
                         std::to_string(from_publishers[static_cast<std::size_t>(j)]));
    }
  }
  return problems;
}

}  // namespace

TEST_CASE("Stress: random chains and fans of teams process each item exactly once per team and end every cycle Idle") {
  const std::uint64_t seed = stress_seed(20240611);
  const long cycles = static_cast<long>(10000 * stress_scale());
  MESSAGE("stress seed " << seed << ", " << cycles << " cycles");
  std::mt19937_64 rng(seed);
  auto uni = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };

  long done = 0;
  long items_total = 0;
  long failures = 0;
  int config_index = 0;
  while (done < cycles && failures == 0) {
    Config cfg(rng, config_index++);
    const int rounds = uni(5, 40);
    for (int r = 0; r < rounds && done < cycles && failures == 0; ++r, ++done) {
      const int k = cfg.k;
      std::vector<int> start(k), extra(k);
      for (int i = 0; i < k; ++i) {
        start[i] = uni(cfg.in[i] == 0 ? 1 : 0, cfg.budget[i]);
        extra[i] = uni(0, cfg.budget[i] - start[i]);
      }
      std::vector<int> activated(k);
      for (int i = 0; i < k; ++i) activated[i] = start[i] + extra[i];
      // Subscribers before publishers (Spec NoEnqueue: a publisher must not find its subscriber Idle).
      for (int i = k - 1; i >= 0; --i) {
        cfg.teams[i]->start_cycle(marking_routine(i, static_cast<Work::Kind>(uni(0, 2))),
                                  static_cast<unsigned>(start[i]));
      }
      // Items for every team the client feeds: sources, and teams with a registered external publisher.
      std::vector<std::vector<std::shared_ptr<CountedItem>>> items(k);
      int next_id = 0;
      std::vector<int> feed_order(k);
      for (int i = 0; i < k; ++i) feed_order[i] = i;
      std::shuffle(feed_order.begin(), feed_order.end(), rng);
      for (int i : feed_order) {
        if (cfg.has_work_pub[i] && !cfg.external[i]) continue;
        const int n = uni(0, 9) == 0 ? uni(50, 120) : uni(0, 12);
        // One at a time or in batches of random size (both entry points, mixed).
        for (int j = 0; j < n;) {
          const int batch = uni(0, 2) == 0 ? 1 : uni(1, 20);
          if (uni(0, 30) == 0) cfg.teams[i]->enqueue(std::vector<std::shared_ptr<DataItem>>{});  // allowed: nothing
          std::vector<std::shared_ptr<DataItem>> some;
          for (int b = 0; b < batch && j < n; ++b, ++j) {
            items[i].push_back(item(next_id++));
            some.push_back(items[i].back());
          }
          if (some.size() == 1 && uni(0, 1) == 0) {
            cfg.teams[i]->enqueue(std::move(some.front()));
          } else {
            cfg.teams[i]->enqueue(std::move(some));
          }
        }
        if (extra[i] > 0 && uni(0, 1) == 0) {
          cfg.teams[i]->increase_thread_count(static_cast<unsigned>(extra[i]));
          extra[i] = 0;
        }
        cfg.teams[i]->close_queue();
      }
      for (int i = 0; i < k; ++i) {
        if (extra[i] > 0) cfg.teams[i]->increase_thread_count(static_cast<unsigned>(extra[i]));
      }
      // Publishers before subscribers, mostly; any order is allowed (wait in RunningOpen is fine).
      if (uni(0, 4) == 0) {
        for (int i = k - 1; i >= 0; --i) watched_wait(*cfg.teams[i]);
      } else {
        for (int i = 0; i < k; ++i) watched_wait(*cfg.teams[i]);
      }
      // Every cycle ends Idle, with nothing queued and every thread Idle.
      for (int i = 0; i < k; ++i) {
        const TeamSnapshot s = cfg.teams[i]->snapshot();
        const bool idle =
            s.mode == TeamMode::Idle && s.n_idle == s.n_max && s.n_queued == 0 && s.n_to_activate == 0 && !s.finishing;
        const bool clean = s.cycle.errors == 0 && s.cycle.processed == s.cycle.enqueued && s.cycle.skipped == 0;
        if (!idle || !clean) {
          ++failures;
          FAIL_CHECK("team " << s.cycle.routine << " after cycle " << s.cycle.cycle << ": mode " << to_string(s.mode)
                             << ", idle " << s.n_idle << "/" << s.n_max << ", queued " << s.n_queued << ", enqueued "
                             << s.cycle.enqueued << ", processed " << s.cycle.processed
                             << ", error: " << s.cycle.error);
        }
      }
      for (const std::string& problem : unbalanced_threads(cfg, activated)) {
        ++failures;
        FAIL_CHECK("round " << done << ": " << problem);
      }
      // Each item was processed exactly once by each team on its path, and by no other team.
      for (int s = 0; s < k; ++s) {
        const std::vector<int> path = cfg.path_from(s);
        for (const auto& it : items[s]) {
          ++items_total;
          for (int t = 0; t < k; ++t) {
            const int expected = std::find(path.begin(), path.end(), t) != path.end() ? 1 : 0;
            if (it->hits[t].load() != expected) {
              ++failures;
              FAIL_CHECK("item #" << it->id << " from team " << s << " was processed " << it->hits[t].load()
                                  << " times by team " << t << " (expected " << expected << ")");
            }
          }
        }
      }
    }
  }
  CHECK(done == cycles);
  CHECK(failures == 0);
  MESSAGE(done << " cycles over " << config_index << " configurations, " << items_total << " items checked");
}

TEST_CASE("Stress: injected routine failures are counted, drained and reported, and never hang a chain") {
  const std::uint64_t seed = stress_seed(777);
  const long cycles = static_cast<long>(1500 * stress_scale());
  std::mt19937_64 rng(seed + 1);
  auto uni = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  long done = 0;
  long failed_cycles = 0;
  int config_index = 0;
  while (done < cycles) {
    Config cfg(rng, 100000 + config_index++);
    const int rounds = uni(5, 20);
    for (int r = 0; r < rounds && done < cycles; ++r, ++done) {
      const int k = cfg.k;
      std::vector<int> activated(k);
      for (int i = k - 1; i >= 0; --i) {
        activated[i] = uni(cfg.in[i] == 0 ? 1 : 0, cfg.budget[i]);
        cfg.teams[i]->start_cycle(marking_routine(i, Work::none, 0.05), static_cast<unsigned>(activated[i]));
      }
      int next_id = uni(0, 1 << 20);
      for (int i = 0; i < k; ++i) {
        if (cfg.has_work_pub[i] && !cfg.external[i]) continue;
        const int n = uni(0, 30);
        for (int j = 0; j < n; ++j) cfg.teams[i]->enqueue(item(next_id++));
        cfg.teams[i]->close_queue();
      }
      for (int i = 0; i < k; ++i) {
        bool threw = false;
        try {
          watched_wait(*cfg.teams[i]);
        } catch (const Error& e) {
          threw = true;
          CHECK(std::string(e.what()).find("injected failure") != std::string::npos);
        }
        const CycleReport rep = cfg.teams[i]->last_cycle();
        CHECK(threw == (rep.errors > 0));
        CHECK(rep.enqueued == rep.processed + rep.failed + rep.skipped);
        if (cfg.work_sub[i] >= 0) CHECK(rep.processed == rep.forwarded + rep.undelivered);
        CHECK(cfg.teams[i]->mode() == TeamMode::Idle);
        if (threw) ++failed_cycles;
      }
      // What subscribers received is what their publishers forwarded (plus external items).
      for (int j = 0; j < k; ++j) {
        if (!cfg.has_work_pub[j] || cfg.external[j]) continue;
        std::size_t forwarded = 0;
        for (int i = 0; i < k; ++i) {
          if (cfg.work_sub[i] == j) forwarded += cfg.teams[i]->last_cycle().forwarded;
        }
        CHECK(cfg.teams[j]->last_cycle().enqueued == forwarded);
      }
      for (const std::string& problem : unbalanced_threads(cfg, activated))
        FAIL_CHECK("round " << done << ": " << problem);
    }
  }
  CHECK(failed_cycles > 0);
  MESSAGE(done << " cycles with injected failures, " << failed_cycles << " team cycles failed as expected");
}

TEST_CASE("Stress: destroying linked teams in any order at any moment neither deadlocks nor leaks") {
  const long rounds = static_cast<long>(300 * stress_scale());
  std::mt19937_64 rng(stress_seed(4242) + 2);
  auto uni = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (long r = 0; r < rounds; ++r) {
    std::vector<std::weak_ptr<CountedItem>> watched;
    {
      Config cfg(rng, 200000 + static_cast<int>(r));
      const int k = cfg.k;
      for (int i = k - 1; i >= 0; --i) {
        cfg.teams[i]->start_cycle(marking_routine(i, static_cast<Work::Kind>(uni(0, 2))),
                                  static_cast<unsigned>(uni(cfg.in[i] == 0 ? 1 : 0, cfg.budget[i])));
      }
      for (int i = 0; i < k; ++i) {
        if (cfg.has_work_pub[i] && !cfg.external[i]) continue;
        for (int j = uni(0, 20); j > 0; --j) {
          auto it = item(j);
          watched.push_back(it);
          cfg.teams[i]->enqueue(std::move(it));
        }
        if (uni(0, 1) == 0) cfg.teams[i]->close_queue();
      }
      // Destroy in a random order, some teams mid-cycle.
      std::vector<int> order(k);
      for (int i = 0; i < k; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      for (int i : order) cfg.teams[i].reset();
    }
    for (const auto& w : watched) CHECK(w.expired());
  }
}
