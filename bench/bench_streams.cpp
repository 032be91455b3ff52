// Stream programs: receiver and transmitter throughput of the 802.11a-style chain, sequential
// (the reference interpreter) against |>>>| on the parallel executor, and the cost of commit
// queues per item against the SPSC ring. Ratios are against baselines measured in this run.
//
//   korch-bench-streams [frames] [threads] [queue capacity] [commit queue capacity]
#include <korch/streams.hpp>
#include <korch/streams/baseband.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

using namespace korch::streams;
namespace bb = korch::streams::baseband;

namespace {

template <class F>
double best_of(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

volatile double sink_value = 0;

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  const std::size_t frames = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 40;
  const unsigned threads = argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)) : 2;
  const std::size_t qcap = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1024;
  const std::size_t cqcap = argc > 4 ? std::strtoul(argv[4], nullptr, 10) : 65536;
  const int reps = 3;
  const auto fr = bb::random_frames(frames, 200, 1500, 7);
  const auto tx_in = bb::tx_input(fr);
  ParallelOptions o;
  o.threads = threads;
  o.queue_capacity = qcap;
  o.commit_queue_capacity = cqcap;

  std::vector<Item> samples;
  const double tx_seq = best_of(reps, [&] { samples = run_sequential(bb::transmitter(false), tx_in).output; });
  ParallelResult txp;
  const double tx_par = best_of(reps, [&] { txp = run_parallel(bb::transmitter(true), tx_in, o); });
  const double n_samples = static_cast<double>(samples.size() / 2);
  std::printf("korch-bench-streams: %zu frames, %.0f complex samples, %zu payload bits, %u threads, queues %zu, "
              "commit queues %zu\n", frames, n_samples, bb::payload_bits(fr).size(), threads, qcap, cqcap);
  std::printf("transmitter  sequential      %10.3f Msamples/s  (baseline)\n", n_samples / tx_seq / 1e6);
  std::printf("transmitter  |>>>| %u threads %10.3f Msamples/s  %.2fx%s\n", threads, n_samples / tx_par / 1e6,
              tx_seq / tx_par, txp.output == samples ? "" : "  OUTPUT DIFFERS");

  bb::add_noise(samples, 0.4, 3);
  RunResult rs;
  const double rx_seq = best_of(reps, [&] { rs = run_sequential(bb::receiver(false), samples); });
  ParallelResult rp, r1;
  const double rx_par = best_of(reps, [&] { rp = run_parallel(bb::receiver(true), samples, o); });
  ParallelOptions one = o;
  one.threads = 1;
  const double rx_one = best_of(reps, [&] { r1 = run_parallel(bb::receiver(true), samples, one); });
  std::printf("receiver     sequential      %10.3f Msamples/s  (baseline)\n", n_samples / rx_seq / 1e6);
  std::printf("receiver     |>>>| 1 thread  %10.3f Msamples/s  %.2fx%s\n", n_samples / rx_one / 1e6, rx_seq / rx_one,
              r1.output == rs.output ? "" : "  OUTPUT DIFFERS");
  std::printf("receiver     |>>>| %u threads %10.3f Msamples/s  %.2fx%s  (goal >= 1.6x)\n", threads,
              n_samples / rx_par / 1e6, rx_seq / rx_par, rp.output == rs.output ? "" : "  OUTPUT DIFFERS");
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
  std::printf("transmitter  busy time per thread:");
  for (double b : txp.busy_seconds) std::printf(" %.4f s", b);
  std::printf("  -> the split allows %.2fx on idle cores\n", split(txp));
  std::printf("receiver     commits: %llu calls for %llu items (%.1f items per commit), %llu rollbacks undoing %llu reads\n",
              static_cast<unsigned long long>(rp.commits.commits),
              static_cast<unsigned long long>(rp.commits.committed_items),
              rp.commits.commits ? static_cast<double>(rp.commits.committed_items) / static_cast<double>(rp.commits.commits) : 0.0,
              static_cast<unsigned long long>(rp.commits.rollbacks),
              static_cast<unsigned long long>(rp.commits.rolled_back_items));

  // Queue cost per item, one thread: SPSC push+pop against commit-queue write+read+commit.
  const std::size_t n = 1 << 22;
  SpscRing<Item> ring("ring", 1024);
  CommitQueue<Item> cq("cq", 1024);
  const double t_ring = best_of(reps, [&] {
    Item x = 0, acc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ring.try_push(static_cast<Item>(i));
      ring.try_pop(x);
      acc += x;
    }
    sink_value = acc;
  });
  const double t_commit1 = best_of(reps, [&] {
    Item x = 0, acc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      cq.try_write(static_cast<Item>(i));
      cq.try_read(x);
      cq.commit(1);
      acc += x;
    }
    sink_value = acc;
  });
  const double t_batched = best_of(reps, [&] {
    Item x = 0, acc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      cq.try_write(static_cast<Item>(i));
      cq.try_read(x);
      if ((i & 511) == 511) cq.commit(512);
      acc += x;
    }
    sink_value = acc;
  });
  const double ns = 1e9 / static_cast<double>(n);
  std::printf("queue        spsc push+pop               %6.2f ns/item  (baseline)\n", t_ring * ns);
  std::printf("queue        commit write+read+commit(1) %6.2f ns/item  %.2fx  (+%.2f ns commit overhead per item)\n",
              t_commit1 * ns, t_commit1 / t_ring, (t_commit1 - t_ring) * ns);
  std::printf("queue        commit, batched commit(512) %6.2f ns/item  %.2fx  (+%.2f ns per item)\n", t_batched * ns,
              t_batched / t_ring, (t_batched - t_ring) * ns);
  return 0;
}
