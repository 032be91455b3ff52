// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Soak: many random execution cycles with faults injected, counting items lost or processed twice
// (both must be 0) and cycles per second. A benchmark of reliability, not a test: it runs for minutes.
//
// Each cycle is one of
//  * a round of a random set of 1-5 thread teams (1-3 threads each) linked as work and thread
//    publishers/subscribers, with random thread counts, items and timing; routines throw on a few
//    items; a few rounds destroy every team in the middle of the cycle, in random order;
//  * a Runtime::execute of a random built-in configuration on a small grid, with a fault injected
//    now and then in a helper or the distributor (korch::faults) or thrown by the action.
// An item is lost when a team that did not fail never got it from a publisher that processed it,
// when the items a team accounts for (processed, failed, skipped) differ from those it was given, or
// when an item outlives the teams destroyed around it; it is duplicated when a team runs it twice.
//
//   korch-bench-soak [cycles=1000000] [--seed N]
#include "bench_command_lines.hpp"
#include <korch/cli/program.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>
#include <korch/fault_injection.hpp>
#include <korch/runtime.hpp>
#include <korch/thread_team.hpp>

#include "bench_timing.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using namespace korch;

constexpr int kMaxTeams = 5;

struct SoakItem : DataItem {
  explicit SoakItem(std::uint64_t id_) : id(id_) {
    for (auto& h : hits) h.store(0, std::memory_order_relaxed);
  }
  std::string describe() const override { return "soak item #" + std::to_string(id); }
  std::uint64_t id;
  std::array<std::atomic<int>, kMaxTeams> hits;
};

struct Tally {
  std::uint64_t team_cycles = 0, failed_team_cycles = 0, destroyed_rounds = 0;
  std::uint64_t runtime_cycles = 0, failed_runtime_cycles = 0;
  std::uint64_t items = 0, lost = 0, duplicated = 0;
  std::string first_problem;
  void problem(std::uint64_t& counter, std::uint64_t n, const std::string& what) {
    counter += n;
    if (first_problem.empty()) first_problem = what;
  }
};

using Rng = std::mt19937_64;
int uni(Rng& rng, int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

// A random set of linked teams (edges from lower to higher index: acyclic), with thread budgets that
// respect Req ThreadBalance.
struct Teams {
  int k;
  std::vector<std::unique_ptr<ThreadTeam>> teams;
  std::vector<int> n_max, work_sub, thread_sub, in, budget;
  std::vector<bool> has_work_pub;

  Teams(Rng& rng, std::uint64_t index) : k(uni(rng, 1, kMaxTeams)) {
    n_max.resize(k);
    work_sub.assign(k, -1);
    thread_sub.assign(k, -1);
    in.assign(k, 0);
    budget.assign(k, 0);
    has_work_pub.assign(k, false);
    for (int i = 0; i < k; ++i) {
      n_max[i] = uni(rng, 1, 3);
      TeamOptions options;
      options.spin = std::chrono::microseconds(uni(rng, 0, 1) * 20);
      options.waiter_works = uni(rng, 0, 3) != 0;
      teams.push_back(std::make_unique<ThreadTeam>("soak" + std::to_string(index) + "." + std::to_string(i),
                                                   static_cast<unsigned>(n_max[i]), options));
    }
    for (int i = 0; i < k; ++i) {
      budget[i] = uni(rng, in[i] == 0 ? 1 : 0, n_max[i] - in[i]);
      const int out = in[i] + budget[i];
      if (i + 1 < k && uni(rng, 0, 9) < 4) {
        const int j = uni(rng, i + 1, k - 1);
        if (in[j] + out <= n_max[j]) {
          thread_sub[i] = j;
          in[j] += out;
          teams[i]->attach_thread_subscriber(*teams[j]);
        }
      }
      if (i + 1 < k && uni(rng, 0, 9) < 6) {
        work_sub[i] = uni(rng, i + 1, k - 1);
        has_work_pub[work_sub[i]] = true;
        teams[i]->attach_work_subscriber(*teams[work_sub[i]]);
      }
    }
  }
};

ActionRoutine marking(int slot, unsigned throw_per_mille) {
  return ActionRoutine("mark" + std::to_string(slot), [slot, throw_per_mille](const ActionContext&, DataItem& it) {
    auto& item = static_cast<SoakItem&>(it);
    item.hits[slot].fetch_add(1, std::memory_order_relaxed);
    const std::uint64_t h = (item.id * 0x9E3779B97F4A7C15ULL) ^ (static_cast<std::uint64_t>(slot) * 0xC2B2AE3DULL);
    if ((h >> 17) % 1000 < throw_per_mille) throw std::runtime_error("injected routine failure");
  });
}

using RoundItems = std::vector<std::vector<std::shared_ptr<SoakItem>>>;  // per team: the items enqueued

// Starts a cycle on every team and enqueues items on those no team feeds; with `destroy`, leaves
// some queues open.
RoundItems start_round(Rng& rng, Teams& t, bool destroy, std::uint64_t& next_id) {
  const unsigned throw_per_mille = uni(rng, 0, 3) == 0 ? 20U : 0U;
  for (int i = t.k - 1; i >= 0; --i) {  // subscribers first
    t.teams[i]->start_cycle(marking(i, throw_per_mille),
                            static_cast<unsigned>(uni(rng, t.in[i] == 0 ? 1 : 0, t.budget[i])));
  }
  RoundItems items(t.k);
  for (int i = 0; i < t.k; ++i) {
    if (t.has_work_pub[i]) continue;
    const int n = uni(rng, 0, 9) == 0 ? uni(rng, 30, 100) : uni(rng, 0, 10);
    for (int j = 0; j < n; ++j) {
      items[i].push_back(std::make_shared<SoakItem>(next_id++));
      t.teams[i]->enqueue(items[i].back());
    }
    if (!destroy || uni(rng, 0, 1) == 0) t.teams[i]->close_queue();
  }
  return items;
}

// Destroys the teams mid-cycle in random order: no item may have run twice or outlive them.
void destroy_mid_cycle(Rng& rng, std::unique_ptr<Teams>& holder, RoundItems& items, Tally& tally) {
  Teams& t = *holder;
  ++tally.destroyed_rounds;
  std::vector<std::weak_ptr<SoakItem>> watched;
  for (auto& group : items) {
    for (auto& it : group) watched.push_back(it);
  }
  std::vector<int> order(t.k);
  for (int i = 0; i < t.k; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (int i : order) t.teams[i].reset();
  holder.reset();
  for (auto& group : items) {
    for (auto& it : group) {
      ++tally.items;
      for (int s = 0; s < kMaxTeams; ++s) {
        if (it->hits[s].load() > 1)
          tally.problem(tally.duplicated, 1, it->describe() + " ran twice in a destroyed team");
      }
    }
  }
  items.clear();
  for (const auto& w : watched) {
    if (!w.expired()) tally.problem(tally.lost, 1, "an item outlived the teams destroyed around it");
  }
}

// Waits for every team; each must account for all its items, and each work subscriber must have
// received what its publishers forwarded.
std::vector<CycleReport> wait_and_check_counts(Teams& t, Tally& tally) {
  std::vector<CycleReport> rep(t.k);
  for (int i = 0; i < t.k; ++i) {
    try {
      t.teams[i]->wait();
    } catch (const Error&) {
    }
    rep[i] = t.teams[i]->last_cycle();
    if (rep[i].errors > 0) ++tally.failed_team_cycles;
    if (rep[i].enqueued != rep[i].processed + rep[i].failed + rep[i].skipped) {
      tally.problem(tally.lost, rep[i].enqueued - rep[i].processed - rep[i].failed - rep[i].skipped,
                    "team " + t.teams[i]->name() + " does not account for all its items");
    }
  }
  for (int j = 0; j < t.k; ++j) {
    if (!t.has_work_pub[j]) continue;
    std::size_t forwarded = 0;
    for (int i = 0; i < t.k; ++i) {
      if (t.work_sub[i] == j) forwarded += rep[i].forwarded;
    }
    if (rep[j].enqueued != forwarded) {
      tally.problem(tally.lost, forwarded > rep[j].enqueued ? forwarded - rep[j].enqueued : rep[j].enqueued - forwarded,
                    "team " + t.teams[j]->name() + " did not receive what its publishers forwarded");
    }
  }
  return rep;
}

// Every item ran at most once in each team of its chain, and reached the next team unless one failed.
void check_items(const Teams& t, const RoundItems& items, const std::vector<CycleReport>& rep, Tally& tally) {
  for (int s = 0; s < t.k; ++s) {
    for (const auto& it : items[s]) {
      ++tally.items;
      for (int a = s; a >= 0; a = t.work_sub[a]) {
        const int h = it->hits[a].load();
        if (h > 1) tally.problem(tally.duplicated, 1, it->describe() + " ran twice in team " + t.teams[a]->name());
        const int next = t.work_sub[a];
        // Processed by a team that did not fail, so it must have reached the next one.
        if (h == 1 && next >= 0 && rep[a].errors == 0 && rep[next].errors == 0 && it->hits[next].load() == 0) {
          tally.problem(tally.lost, 1, it->describe() + " never reached team " + t.teams[next]->name());
        }
      }
    }
  }
}

// One round of cycles over `t`; destroys the teams mid-cycle when `destroy` is set.
void team_round(Rng& rng, std::unique_ptr<Teams>& holder, bool destroy, std::uint64_t& next_id, Tally& tally) {
  Teams& t = *holder;
  RoundItems items = start_round(rng, t, destroy, next_id);
  tally.team_cycles += static_cast<std::uint64_t>(t.k);
  if (destroy) {
    destroy_mid_cycle(rng, holder, items, tally);
    return;
  }
  const std::vector<CycleReport> rep = wait_and_check_counts(t, tally);
  check_items(t, items, rep, tally);
}

// Counts the action's calls per item in one runtime cycle, by description: packets are made and
// freed during the cycle, so an address may be reused by the next packet.
struct CallCounter {
  std::mutex m;
  std::unordered_map<std::string, int> calls;
};

void runtime_cycle(Rng& rng, Runtime& rt, Tally& tally) {
  static const std::vector<std::string> configs = {"cpu_only", "gpu_only", "cpu_gpu_action_parallel",
                                                   "cpu_gpu_data_parallel", "hybrid_distributor"};
  const Configuration cfg = configurations::get(configs[static_cast<std::size_t>(uni(rng, 0, 4))]);
  GridSpec spec;
  spec.block_cells = {8, 8, 8};
  spec.blocks = {uni(rng, 1, 3), uni(rng, 1, 2), 1};
  spec.guard = 1;
  spec.n_vars = 3;
  spec.tile_cells = {4, 4, 8};
  Grid grid(spec);
  std::unordered_map<std::string, std::unique_ptr<CallCounter>> counters;
  Bundle bundle("soak");
  const int fault = uni(rng, 0, 9);  // 0: helper, 1: distributor, 2: action throws
  for (const auto& team : cfg.teams) {
    if (counters.count(team.action)) continue;
    auto& counter = counters[team.action];
    counter = std::make_unique<CallCounter>();
    CallCounter* c = counter.get();
    const bool throws = fault == 2;
    bundle.add(ActionRoutine(team.action, [c, throws](const ActionContext&, DataItem& item) {
      const std::string what = item.describe();
      int n;
      {
        std::lock_guard<std::mutex> lk(c->m);
        n = ++c->calls[what];
      }
      if (throws && n == 1 && std::hash<std::string>{}(what) % 7 == 0) {
        throw std::runtime_error("injected action failure");
      }
    }));
  }
  if (fault == 0) faults::arm(faults::Point::helper_item, static_cast<std::uint64_t>(uni(rng, 1, 6)));
  if (fault == 1) faults::arm(faults::Point::distributor_push, static_cast<std::uint64_t>(uni(rng, 1, 3)));
  bool failed = false;
  try {
    rt.execute(bundle, cfg, grid);
  } catch (const Error&) {
    failed = true;
  }
  faults::disarm();
  ++tally.runtime_cycles;
  if (failed) ++tally.failed_runtime_cycles;
  for (const auto& report : rt.last_reports()) {
    const CycleReport& r = report.cycle;
    if (r.enqueued != r.processed + r.failed + r.skipped) {
      tally.problem(tally.lost, r.enqueued - r.processed - r.failed - r.skipped,
                    "runtime node " + report.node + " does not account for all its items");
    }
    if (!failed && r.errors == 0 && r.processed != r.enqueued) {
      tally.problem(tally.lost, r.enqueued - r.processed, "runtime node " + report.node + " lost items");
    }
  }
  for (const auto& [action, counter] : counters) {
    for (const auto& [item, n] : counter->calls) {
      ++tally.items;
      if (n > 1) tally.problem(tally.duplicated, 1, "action " + action + " ran twice on one item");
    }
  }
  if (rt.pinned_pool().outstanding_bytes() != 0 || rt.device_pool().outstanding_bytes() != 0) {
    tally.problem(tally.lost, 1, "the pools do not balance after a cycle");
  }
}

using Args = korch::bench::SoakBenchArgs;

int run(const Args& args) {
  Rng rng(args.seed);
  Runtime rt;
  Tally tally;
  std::uint64_t next_id = 0;
  std::uint64_t index = 0;
  const auto t0 = bench::Clock::now();
  std::uint64_t done = 0;
  std::uint64_t next_report = args.cycles / 10;
  while (done < args.cycles) {
    if (uni(rng, 0, 9) == 0) {
      runtime_cycle(rng, rt, tally);
      ++done;
    } else {
      auto teams = std::make_unique<Teams>(rng, index++);
      const int rounds = uni(rng, 5, 40);
      for (int r = 0; r < rounds && done < args.cycles && teams; ++r, ++done) {
        team_round(rng, teams, uni(rng, 0, 499) == 0, next_id, tally);
      }
    }
    if (done >= next_report && next_report > 0) {
      std::printf("  %llu cycles, %.0f s\n", static_cast<unsigned long long>(done), bench::seconds_since(t0));
      std::fflush(stdout);
      next_report += args.cycles / 10;
    }
  }
  const double seconds = bench::seconds_since(t0);
  std::printf("soak: %llu cycles (seed %llu) in %.1f s: %.0f cycles/s\n", static_cast<unsigned long long>(done),
              static_cast<unsigned long long>(args.seed), seconds, static_cast<double>(done) / seconds);
  std::printf(
      "  team cycles %llu (failed %llu), rounds destroyed mid-cycle %llu, runtime cycles %llu (failed %llu)\n",
      static_cast<unsigned long long>(tally.team_cycles), static_cast<unsigned long long>(tally.failed_team_cycles),
      static_cast<unsigned long long>(tally.destroyed_rounds), static_cast<unsigned long long>(tally.runtime_cycles),
      static_cast<unsigned long long>(tally.failed_runtime_cycles));
  std::printf("  items checked %llu: lost %llu, duplicated %llu\n", static_cast<unsigned long long>(tally.items),
              static_cast<unsigned long long>(tally.lost), static_cast<unsigned long long>(tally.duplicated));
  if (tally.lost + tally.duplicated > 0) {
    std::printf("  first problem: %s\n", tally.first_problem.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  const auto command_line = korch::bench::soak_bench_command_line(args);
  korch::cli::Program& program = *command_line;
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(args);
  });
}
