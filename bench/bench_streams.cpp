// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stream programs: receiver and transmitter throughput of the 802.11a-style chain, sequential
// (the reference interpreter) against |>>>| on the parallel executor, and the cost of commit
// queues per item against the SPSC ring. Ratios are against baselines measured in this run: the
// variants run interleaved, `reps` rounds of each, and every ratio is the median over rounds of
// (sequential time / parallel time) within a round, so a slow period of a shared machine slows
// both sides of a ratio alike.
//
//   korch-bench-streams [frames] [threads] [queue capacity] [commit queue capacity] [reps]
//   KORCH_BENCH_STREAMS_IDLE_SPIN_US=N   the schedulers' idle_spin in microseconds (-1: never sleep)
#include "bench_command_lines.hpp"
#include <korch/streams.hpp>
#include "baseband.hpp"
#include <korch/cli/program.hpp>

#include "bench_timing.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace korch::streams;
namespace bb = korch::streams::baseband;
using korch::bench::best_of;
using korch::bench::median;
using korch::bench::smallest;
using korch::bench::time_once;

namespace {

volatile double sink_value = 0;

// Per-round times of the variants of one comparison; variant 0 is the baseline.
struct Rounds {
  std::vector<std::vector<double>> seconds;
  explicit Rounds(std::size_t variants) : seconds(variants) {}
  // Median over rounds of baseline time / variant time.
  double ratio(std::size_t v) const {
    std::vector<double> r;
    for (std::size_t i = 0; i < seconds[v].size(); ++i) r.push_back(seconds[0][i] / seconds[v][i]);
    return median(r);
  }
  double rate(std::size_t v, double items) const { return items / median(seconds[v]) / 1e6; }
  double best_rate(std::size_t v, double items) const { return items / smallest(seconds[v]) / 1e6; }
};

using Args = korch::bench::StreamsBenchArgs;

// The parallel executor's options from the command line and KORCH_BENCH_STREAMS_IDLE_SPIN_US.
ParallelOptions parallel_options(const Args& args) {
  ParallelOptions o;
  o.threads = args.threads;
  o.queue_capacity = args.qcap;
  o.commit_queue_capacity = args.cqcap;
  if (const char* spin = std::getenv("KORCH_BENCH_STREAMS_IDLE_SPIN_US")) {
    const long us = std::atol(spin);
    o.idle_spin = us < 0 ? std::chrono::microseconds::max() : std::chrono::microseconds(us);
  }
  return o;
}

// The transmitter sequential (variant 0) and on `threads` threads; the last round's outputs.
struct TransmitterRuns {
  Rounds rounds{2};
  std::vector<Item> samples;  // the sequential output
  ParallelResult parallel;
  bool same = true;  // the parallel output equals the sequential one in every round
};

TransmitterRuns time_transmitter(const std::vector<Item>& tx_in, const ParallelOptions& o, int reps) {
  TransmitterRuns tx;
  for (int r = 0; r < reps; ++r) {
    tx.rounds.seconds[0].push_back(
        time_once([&] { tx.samples = run_sequential(bb::transmitter(false), tx_in).output; }));
    tx.rounds.seconds[1].push_back(time_once([&] { tx.parallel = run_parallel(bb::transmitter(true), tx_in, o); }));
    tx.same = tx.same && tx.parallel.output == tx.samples;
  }
  return tx;
}

// The receiver sequential (variant 0), on one thread and on `threads` threads.
struct ReceiverRuns {
  Rounds rounds{3};
  ParallelResult parallel;  // the last round's run on `threads` threads
  bool one_same = true, par_same = true;
};

ReceiverRuns time_receiver(const std::vector<Item>& samples, const ParallelOptions& o, int reps) {
  ParallelOptions one = o;
  one.threads = 1;
  ReceiverRuns rx;
  RunResult rs;
  ParallelResult r1;
  for (int r = 0; r < reps; ++r) {
    rx.rounds.seconds[0].push_back(time_once([&] { rs = run_sequential(bb::receiver(false), samples); }));
    rx.rounds.seconds[1].push_back(time_once([&] { r1 = run_parallel(bb::receiver(true), samples, one); }));
    rx.rounds.seconds[2].push_back(time_once([&] { rx.parallel = run_parallel(bb::receiver(true), samples, o); }));
    rx.one_same = rx.one_same && r1.output == rs.output;
    rx.par_same = rx.par_same && rx.parallel.output == rs.output;
  }
  return rx;
}

// How the parallel runs' work split over their threads, their schedulers' sleeps and the commits.
void print_parallel_details(const ParallelResult& rp, const ParallelResult& txp, const ParallelOptions& o) {
  auto split = [](const ParallelResult& r) {
    double sum = 0, mx = 0;
    for (double b : r.busy_seconds) {
      sum += b;
      mx = std::max(mx, b);
    }
    return mx > 0 ? sum / mx : 0.0;
  };
  std::printf("receiver     busy time per thread:");
  for (double b : rp.busy_seconds) std::printf(" %.4f s", b);
  std::printf("  -> the split allows %.2fx on idle cores\n", split(rp));
  const bool never_sleep = o.idle_spin == std::chrono::microseconds::max();
  std::printf("receiver     scheduler threads went to sleep %llu times and polled %.4f s (idle_spin %s)\n",
              static_cast<unsigned long long>(rp.parks), rp.spin_seconds,
              never_sleep ? "never" : (std::to_string(o.idle_spin.count()) + " us").c_str());
  std::printf("transmitter  busy time per thread:");
  for (double b : txp.busy_seconds) std::printf(" %.4f s", b);
  std::printf("  -> the split allows %.2fx on idle cores\n", split(txp));
  std::printf(
      "receiver     commits: %llu calls for %llu items (%.1f items per commit), %llu rollbacks undoing %llu reads\n",
      static_cast<unsigned long long>(rp.commits.commits), static_cast<unsigned long long>(rp.commits.committed_items),
      rp.commits.commits ? static_cast<double>(rp.commits.committed_items) / static_cast<double>(rp.commits.commits)
                         : 0.0,
      static_cast<unsigned long long>(rp.commits.rollbacks),
      static_cast<unsigned long long>(rp.commits.rolled_back_items));
}

// A stream that waits: its first stage takes 5 ms per item (sleeping, as if waiting for input),
// so the other scheduler threads are idle; the CPU time they burn with and without sleeping.
void report_idle_stream(const ParallelOptions& o) {
  auto slow = map("slow", {1, 1}, [](const Item* in, Item* out) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    out[0] = in[0];
  });
  const Comp waiting = par_pipe(par_pipe(slow, map("a", {1, 1}, [](const Item* in, Item* out) { out[0] = in[0]; })),
                                map("b", {1, 1}, [](const Item* in, Item* out) { out[0] = in[0]; }));
  const std::vector<Item> few(40, 1.0);
  auto cpu_seconds = [&](std::chrono::microseconds spin) {
    ParallelOptions w = o;
    w.threads = 3;
    w.idle_spin = spin;
    const std::clock_t c0 = std::clock();
    const double wall = time_once([&] { run_parallel(waiting, few, w); });
    return std::make_pair(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC, wall);
  };
  const auto sleeping = cpu_seconds(ParallelOptions{}.idle_spin);
  const auto polling = cpu_seconds(std::chrono::microseconds::max());
  std::printf(
      "idle stream  3 threads, first stage 5 ms/item: CPU %.3f s in %.3f s wall with idle_spin %lld us, "
      "%.3f s in %.3f s never sleeping\n",
      sleeping.first, sleeping.second, static_cast<long long>(ParallelOptions{}.idle_spin.count()), polling.first,
      polling.second);
}

// Queue cost per item, one thread: SPSC push+pop against commit-queue write+read+commit.
void report_queue_costs() {
  const std::size_t n = 1 << 22;
  SpscRing<Item> ring("ring", 1024);
  CommitQueue<Item> cq("cq", 1024);
  const double t_ring = best_of(3, [&] {
    return time_once([&] {
      Item x = 0, acc = 0;
      for (std::size_t i = 0; i < n; ++i) {
        ring.try_push(static_cast<Item>(i));
        ring.try_pop(x);
        acc += x;
      }
      sink_value = acc;
    });
  });
  const double t_commit1 = best_of(3, [&] {
    return time_once([&] {
      Item x = 0, acc = 0;
      for (std::size_t i = 0; i < n; ++i) {
        cq.try_write(static_cast<Item>(i));
        cq.try_read(x);
        cq.commit(1);
        acc += x;
      }
      sink_value = acc;
    });
  });
  const double t_batched = best_of(3, [&] {
    return time_once([&] {
      Item x = 0, acc = 0;
      for (std::size_t i = 0; i < n; ++i) {
        cq.try_write(static_cast<Item>(i));
        cq.try_read(x);
        if ((i & 511) == 511) cq.commit(512);
        acc += x;
      }
      sink_value = acc;
    });
  });
  const double ns = 1e9 / static_cast<double>(n);
  std::printf("queue        spsc push+pop               %6.2f ns/item  (baseline)\n", t_ring * ns);
  std::printf("queue        commit write+read+commit(1) %6.2f ns/item  %.2fx  (+%.2f ns commit overhead per item)\n",
              t_commit1 * ns, t_commit1 / t_ring, (t_commit1 - t_ring) * ns);
  std::printf("queue        commit, batched commit(512) %6.2f ns/item  %.2fx  (+%.2f ns per item)\n", t_batched * ns,
              t_batched / t_ring, (t_batched - t_ring) * ns);
}

int run(const Args& args) {
  const unsigned threads = args.threads;
  const int reps = args.reps;
  const auto fr = bb::random_frames(args.frames, 200, 1500, 7);
  const ParallelOptions o = parallel_options(args);

  TransmitterRuns tx = time_transmitter(bb::tx_input(fr), o, reps);
  const double n_samples = static_cast<double>(tx.samples.size());
  std::printf(
      "korch-bench-streams: %zu frames, %.0f complex samples, %zu payload bits, %u threads, queues %zu, "
      "commit queues %zu, %d interleaved rounds (medians; best in brackets)\n",
      args.frames, n_samples, bb::payload_bits(fr).size(), threads, args.qcap, args.cqcap, reps);
  std::printf("transmitter  sequential      %8.3f (%6.3f) Msamples/s  (baseline)\n", tx.rounds.rate(0, n_samples),
              tx.rounds.best_rate(0, n_samples));
  std::printf("transmitter  |>>>| %u threads %8.3f (%6.3f) Msamples/s  %.2fx%s\n", threads,
              tx.rounds.rate(1, n_samples), tx.rounds.best_rate(1, n_samples), tx.rounds.ratio(1),
              tx.same ? "" : "  OUTPUT DIFFERS");

  bb::add_noise(tx.samples, 0.4, 3);
  const ReceiverRuns rx = time_receiver(tx.samples, o, reps);
  std::printf("receiver     sequential      %8.3f (%6.3f) Msamples/s  (baseline)\n", rx.rounds.rate(0, n_samples),
              rx.rounds.best_rate(0, n_samples));
  std::printf("receiver     |>>>| 1 thread  %8.3f (%6.3f) Msamples/s  %.2fx%s\n", rx.rounds.rate(1, n_samples),
              rx.rounds.best_rate(1, n_samples), rx.rounds.ratio(1), rx.one_same ? "" : "  OUTPUT DIFFERS");
  std::printf("receiver     |>>>| %u threads %8.3f (%6.3f) Msamples/s  %.2fx%s  (goal >= 1.6x)\n", threads,
              rx.rounds.rate(2, n_samples), rx.rounds.best_rate(2, n_samples), rx.rounds.ratio(2),
              rx.par_same ? "" : "  OUTPUT DIFFERS");
  print_parallel_details(rx.parallel, tx.parallel, o);
  report_idle_stream(o);
  report_queue_costs();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  const auto command_line = korch::bench::streams_bench_command_line(args);
  korch::cli::Program& program = *command_line;
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(args);
  });
}
