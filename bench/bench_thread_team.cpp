// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam against its peers, measured in the same run (prints figures and ratios; asserts nothing).
//
//  * throughput: N items through one team whose action routine does nothing, with 1 and 2 team
//    threads, against oneTBB's flow graph (a function_node of concurrency 1 / 2 fed by try_put,
//    then wait_for_all) and OpenMP tasks (one producer creating a task per item). Every peer gets the
//    same items (std::shared_ptr<DataItem>, copied per item) and calls the same empty
//    std::function<void(DataItem&)>; every peer has the producer thread plus T consumer threads.
//  * latency of an empty cycle (start_cycle, close_queue, wait) and of a 1-item cycle (each
//    measured over at least 0.2 s, see korch_cycles).
//  * a 100-item no-op cycle with 1 and 10 threads.
// Cycle latencies come with the share of cycles whose caller kept its core and their mean: on a
// loaded machine the others include the time slices other programs took from the caller.
// Also printed: the ratios to the better peer and to the reference figures of the existing
// implementation of this design, measured on the same 2-core machine.
//
//   korch-bench-thread_team [items=200000] [rounds=7]
#include "bench_command_lines.hpp"
#include <korch/thread_team.hpp>
#include <korch/cli/program.hpp>

#include "bench_timing.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#if defined(__linux__)
#include <sys/resource.h>
#endif

#if defined(KORCH_BENCH_HAVE_TBB)
#include <tbb/flow_graph.h>
#include <tbb/task_arena.h>
#endif
#if defined(KORCH_BENCH_HAVE_OPENMP)
#include <omp.h>
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using korch::DataItem;
using korch::bench::Clock;

struct BenchItem : DataItem {};

// The work every peer does per item: one call through a std::function that does nothing.
std::function<void(DataItem&)> empty_work = [](DataItem&) {};

using korch::bench::best_of;
using korch::bench::median;
using korch::bench::seconds_since;

double korch_throughput(const std::vector<std::shared_ptr<DataItem>>& items, unsigned threads, int reps,
                        korch::TeamOptions options = {}) {
  korch::ThreadTeam team("bench", threads, options);
  const korch::ActionRoutine routine("empty", [](const korch::ActionContext&, DataItem& item) { empty_work(item); });
  return best_of(reps, [&] {
    const auto t0 = Clock::now();
    team.start_cycle(routine, threads);
    for (const auto& item : items) team.enqueue(item);
    team.close_queue();
    team.wait();
    return seconds_since(t0);
  });
}

#if defined(KORCH_BENCH_HAVE_TBB)
// The oneTBB peer: in an arena of T + 1 threads, a function_node of concurrency T that does the
// empty work; `use(graph, node)` feeds it.
template <class Use>
void with_tbb_node(unsigned threads, Use&& use) {
  tbb::task_arena arena(static_cast<int>(threads) + 1);
  arena.execute([&] {
    tbb::flow::graph g;
    tbb::flow::function_node<std::shared_ptr<DataItem>, tbb::flow::continue_msg> node(
        g, threads, [](const std::shared_ptr<DataItem>& item) {
          empty_work(*item);
          return tbb::flow::continue_msg();
        });
    use(g, node);
  });
}

double tbb_throughput(const std::vector<std::shared_ptr<DataItem>>& items, unsigned threads, int reps) {
  double best = 0;
  with_tbb_node(threads, [&](tbb::flow::graph& g, auto& node) {
    best = best_of(reps, [&] {
      const auto t0 = Clock::now();
      for (const auto& item : items) node.try_put(item);
      g.wait_for_all();
      return seconds_since(t0);
    });
  });
  return best;
}
#endif

#if defined(KORCH_BENCH_HAVE_OPENMP)
double openmp_throughput(const std::vector<std::shared_ptr<DataItem>>& items, unsigned threads, int reps) {
  return best_of(reps, [&] {
    const auto t0 = Clock::now();
#pragma omp parallel num_threads(threads + 1)
#pragma omp single
    {
      for (const auto& item : items) {
        std::shared_ptr<DataItem> p = item;
#pragma omp task firstprivate(p)
        empty_work(*p);
      }
    }
    return seconds_since(t0);
  });
}
#endif

// Context switches of the calling thread so far, involuntary ones (another thread took its core)
// and voluntary ones (it slept); -1 where the system does not say.
long caller_context_switches() {
#if defined(__linux__)
  rusage usage{};
  if (getrusage(RUSAGE_THREAD, &usage) == 0) return usage.ru_nivcsw + usage.ru_nvcsw;
#endif
  return -1;
}

// Per-cycle times (seconds) of at least `cycles` cycles of `n_items` no-op items, and of at least
// min_measured_seconds of cycles: on a loaded machine the caller loses its core for a whole time
// slice of another program now and then (milliseconds), and a mean over a span shorter than a few
// slices would depend on whether one happened to fall into it. `kept_core` gets the times of the
// cycles during which the caller was never switched out: the two sets tell the time slices that
// other programs took apart from what the team's own hand-offs cost.
constexpr double min_measured_seconds = 0.2;

template <class Cycle>
std::vector<double> measure_cycles(int cycles, Cycle&& one_cycle, std::vector<double>* kept_core) {
  std::vector<double> times;
  times.reserve(static_cast<std::size_t>(cycles));
  const int warm_up = cycles / 10;
  Clock::time_point measuring_since{};
  for (int c = 0; c < warm_up + cycles || seconds_since(measuring_since) < min_measured_seconds; ++c) {
    if (c == warm_up) measuring_since = Clock::now();
    const long switches = kept_core != nullptr ? caller_context_switches() : 0;
    const auto t0 = Clock::now();
    one_cycle();
    if (c < warm_up) continue;
    times.push_back(seconds_since(t0));
    if (kept_core != nullptr && switches >= 0 && caller_context_switches() == switches)
      kept_core->push_back(times.back());
  }
  return times;
}

std::vector<std::shared_ptr<DataItem>> bench_items(int n) {
  std::vector<std::shared_ptr<DataItem>> items;
  for (int i = 0; i < n; ++i) items.push_back(std::make_shared<BenchItem>());
  return items;
}

std::vector<double> korch_cycles(unsigned threads, int n_items, int cycles, korch::TeamOptions options = {},
                                 std::vector<double>* kept_core = nullptr) {
  korch::ThreadTeam team("cycle", threads, options);
  const korch::ActionRoutine routine("empty", [](const korch::ActionContext&, DataItem& item) { empty_work(item); });
  const std::vector<std::shared_ptr<DataItem>> items = bench_items(n_items);
  return measure_cycles(
      cycles,
      [&] {
        team.start_cycle(routine, threads);
        for (const auto& item : items) team.enqueue(item);
        team.close_queue();
        team.wait();
      },
      kept_core);
}

// The peers' cycles, measured the same way. OpenMP: one parallel region of T + 1 threads lasts for
// all cycles (its threads persist, as a team's do); in each cycle the producer creates the items as
// tasks of a taskgroup and waits for them at its end.
#if defined(KORCH_BENCH_HAVE_OPENMP)
std::vector<double> openmp_cycles(unsigned threads, int n_items, int cycles, std::vector<double>* kept_core) {
  const std::vector<std::shared_ptr<DataItem>> items = bench_items(n_items);
  std::vector<double> times;
#pragma omp parallel num_threads(threads + 1)
#pragma omp single
  times = measure_cycles(
      cycles,
      [&] {
#pragma omp taskgroup
        {
          for (const auto& item : items) {
            std::shared_ptr<DataItem> p = item;
#pragma omp task firstprivate(p)
            empty_work(*p);
          }
        }
      },
      kept_core);
  return times;
}
#endif

// oneTBB: the throughput peer's graph; a cycle puts the items and waits for the graph.
#if defined(KORCH_BENCH_HAVE_TBB)
std::vector<double> tbb_cycles(unsigned threads, int n_items, int cycles, std::vector<double>* kept_core) {
  const std::vector<std::shared_ptr<DataItem>> items = bench_items(n_items);
  std::vector<double> times;
  with_tbb_node(threads, [&](tbb::flow::graph& g, auto& node) {
    times = measure_cycles(
        cycles,
        [&] {
          for (const auto& item : items) node.try_put(item);
          g.wait_for_all();
        },
        kept_core);
  });
  return times;
}
#endif

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

// "mean M us over the N% of cycles whose caller kept its core" (nothing where that is not known).
std::string kept_core_summary(const std::vector<double>& all, const std::vector<double>& kept) {
  if (kept.empty() || all.empty()) return "";
  return fmt::format("; caller kept its core in {:.0f}% of cycles: mean {:.2f} us, median {:.2f} us",
                     100.0 * static_cast<double>(kept.size()) / static_cast<double>(all.size()), mean(kept) * 1e6,
                     median(kept) * 1e6);
}

// The same cycle run by the peers (T consumer threads besides the producer), printed below korch's.
void print_peer_cycles([[maybe_unused]] unsigned threads, [[maybe_unused]] int n_items, [[maybe_unused]] int cycles) {
  [[maybe_unused]] auto print = [&](const char* peer, const std::vector<double>& v, const std::vector<double>& kept) {
    std::printf("  the same cycle, %s: median %7.2f us, mean %7.2f us%s\n", peer, median(v) * 1e6, mean(v) * 1e6,
                kept_core_summary(v, kept).c_str());
  };
#if defined(KORCH_BENCH_HAVE_OPENMP)
  {
    std::vector<double> kept;
    const std::vector<double> v = openmp_cycles(threads, n_items, cycles, &kept);
    print("OpenMP tasks (a taskgroup per cycle)", v, kept);
  }
#endif
#if defined(KORCH_BENCH_HAVE_TBB)
  {
    std::vector<double> kept;
    const std::vector<double> v = tbb_cycles(threads, n_items, cycles, &kept);
    print("oneTBB flow graph (wait_for_all per cycle)", v, kept);
  }
#endif
}

using Args = korch::bench::ThreadTeamBenchArgs;
using Items = std::vector<std::shared_ptr<DataItem>>;

struct Peer {
  std::string name;
  std::function<double(unsigned)> seconds;  // better of a warm-up run and a run, T consumer threads
  bool is_korch;
};

// korch's team (and with spin=0) first, then the peers built in; each runs `items`.
std::vector<Peer> throughput_peers(const Items& items, const korch::TeamOptions& sleepy) {
  std::vector<Peer> peers;
  peers.push_back({"korch ThreadTeam       ", [&items](unsigned t) { return korch_throughput(items, t, 2); }, true});
  peers.push_back({"korch ThreadTeam spin=0",
                   [&items, sleepy](unsigned t) { return korch_throughput(items, t, 2, sleepy); }, true});
#if defined(KORCH_BENCH_HAVE_TBB)
  peers.push_back({"oneTBB flow graph      ", [&items](unsigned t) { return tbb_throughput(items, t, 2); }, false});
#endif
#if defined(KORCH_BENCH_HAVE_OPENMP)
  peers.push_back({"OpenMP tasks           ", [&items](unsigned t) { return openmp_throughput(items, t, 2); }, false});
#endif
  return peers;
}

// Microseconds per item of each peer per round, and per round the best other peer's time over korch's.
struct ThroughputRounds {
  std::vector<std::vector<double>> us;
  std::vector<double> round_ratio;
};

// The peers take turns, round after round (in rotating order), so that they all see the same
// load on a shared machine.
ThroughputRounds time_throughput(const std::vector<Peer>& peers, long n_items, int reps, unsigned t) {
  ThroughputRounds rounds;
  rounds.us.resize(peers.size());
  for (int r = 0; r < reps; ++r) {
    std::vector<double> this_round(peers.size());
    for (std::size_t k = 0; k < peers.size(); ++k) {
      const std::size_t p = (k + static_cast<std::size_t>(r)) % peers.size();
      this_round[p] = peers[p].seconds(t) / static_cast<double>(n_items) * 1e6;
      rounds.us[p].push_back(this_round[p]);
    }
    double best_peer = 0;
    for (std::size_t p = 0; p < peers.size(); ++p) {
      if (!peers[p].is_korch && (best_peer == 0 || this_round[p] < best_peer)) best_peer = this_round[p];
    }
    if (best_peer > 0) rounds.round_ratio.push_back(best_peer / this_round[0]);
  }
  return rounds;
}

// Each peer's best round and the median of the per-round ratios, against the better peer and the
// reference of the existing implementation (`reference_us`).
void print_throughput(const std::vector<Peer>& peers, const ThroughputRounds& rounds, unsigned t, double reference_us) {
  double best_peer = 0;
  std::string best_name;
  for (std::size_t p = 0; p < peers.size(); ++p) {
    const double best = *std::min_element(rounds.us[p].begin(), rounds.us[p].end());
    std::printf("T=%u  %s  best %7.3f us/item (%6.2f M items/s), median %7.3f us/item\n", t, peers[p].name.c_str(),
                best, 1.0 / best, median(rounds.us[p]));
    if (!peers[p].is_korch && (best_peer == 0 || best < best_peer)) {
      best_peer = best;
      best_name = peers[p].name.substr(0, peers[p].name.find_last_not_of(' ') + 1);
    }
  }
  const double korch_best = *std::min_element(rounds.us[0].begin(), rounds.us[0].end());
  if (best_peer > 0) {
    std::printf(
        "T=%u  ratio korch / better peer (%s), throughput, best rounds: %.2f; median of per-round ratios: "
        "%.2f  (goal >= 0.67)\n",
        t, best_name.c_str(), best_peer / korch_best, median(rounds.round_ratio));
  }
  std::printf("T=%u  ratio korch / reference (%.2f us/item), throughput: %.2f  (goal > 1)\n\n", t, reference_us,
              reference_us / korch_best);
}

// The empty cycle and the 1-item cycle on one thread.
void report_short_cycles(int cycles, const korch::TeamOptions& sleepy) {
  const std::vector<double> empty = korch_cycles(1, 0, cycles);
  const std::vector<double> empty0 = korch_cycles(1, 0, cycles, sleepy);
  std::printf("empty cycle (start_cycle, close_queue, wait), 1 thread: median %.2f us, mean %.2f us  (goal < 20 us)\n",
              median(empty) * 1e6, mean(empty) * 1e6);
  std::printf("empty cycle, 1 thread, spin=0:                         median %.2f us, mean %.2f us\n",
              median(empty0) * 1e6, mean(empty0) * 1e6);
  // An empty cycle never needs its thread (the activation is taken back at close_queue); one item
  // makes the thread take part: the round trip caller -> team thread -> caller.
  std::vector<double> one_kept;
  const std::vector<double> one = korch_cycles(1, 1, cycles, {}, &one_kept);
  const std::vector<double> one0 = korch_cycles(1, 1, cycles, sleepy);
  std::printf(
      "1-item cycle (start_cycle, enqueue, close_queue, wait), 1 thread: median %.2f us, mean %.2f us; "
      "spin=0: median %.2f us%s\n",
      median(one) * 1e6, mean(one) * 1e6, median(one0) * 1e6, kept_core_summary(one, one_kept).c_str());
  print_peer_cycles(1, 1, cycles);
}

// A 100-item no-op cycle with 1 and 10 threads, against the existing implementation's figures.
void report_100_item_cycles(int cycles, const korch::TeamOptions& sleepy) {
  const double reference_cycle_us[2] = {55, 237};
  const unsigned cycle_threads[2] = {1, 10};
  for (int c = 0; c < 2; ++c) {
    std::vector<double> kept;
    const std::vector<double> v = korch_cycles(cycle_threads[c], 100, cycles / 4, {}, &kept);
    const std::vector<double> v0 = korch_cycles(cycle_threads[c], 100, cycles / 4, sleepy);
    std::printf(
        "100-item no-op cycle, %2u threads: median %7.2f us, mean %7.2f us; spin=0: median %7.2f us; "
        "reference %3.0f us -> ratio reference / korch %.2f  (goal > 1)%s\n",
        cycle_threads[c], median(v) * 1e6, mean(v) * 1e6, median(v0) * 1e6, reference_cycle_us[c],
        reference_cycle_us[c] / (median(v) * 1e6), kept_core_summary(v, kept).c_str());
    print_peer_cycles(cycle_threads[c], 100, cycles / 4);
  }
}

int run(const Args& args) {
  const long n_items = args.items;
  const int reps = args.reps;
  Items items;
  items.reserve(static_cast<std::size_t>(n_items));
  for (long i = 0; i < n_items; ++i) items.push_back(std::make_shared<BenchItem>());

  std::printf("bench_thread_team: %ld no-op items per run, %d rounds; %u hardware threads\n", n_items, reps,
              std::thread::hardware_concurrency());
  std::printf("every peer: the producer thread + T consumer threads, same items, same empty std::function\n\n");

  // Reference: the existing implementation of this design on this machine (us per no-op item).
  const double reference_us_per_item[3] = {0, 0.74, 1.08};
  korch::TeamOptions sleepy;
  sleepy.spin = std::chrono::microseconds(0);
  const std::vector<Peer> peers = throughput_peers(items, sleepy);
  for (unsigned t = 1; t <= 2; ++t) {
    print_throughput(peers, time_throughput(peers, n_items, reps, t), t, reference_us_per_item[t]);
  }

  const int cycles = std::max(1000, static_cast<int>(n_items / 10));
  report_short_cycles(cycles, sleepy);
  report_100_item_cycles(cycles, sleepy);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  const auto command_line = korch::bench::thread_team_bench_command_line(args);
  korch::cli::Program& program = *command_line;
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(args);
  });
}
