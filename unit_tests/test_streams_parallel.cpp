// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parallel executor against the reference semantics: the seed's motivating program and random
// programs, for random cardinalities, queue sizes down to minQSize and 1..4 scheduler threads.
#include "test_streams_support.hpp"

#include <doctest/doctest.h>

#include <korch/streams.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>

#include <ctime>
#endif

using namespace korch::streams;
using namespace korch::streams::testing;

namespace {

// KORCH_STREAMS_SEED=<n> varies the random programs and cardinalities (stress runs); the default is fixed.
std::uint32_t seed_or(std::uint32_t fallback) {
  const char* s = std::getenv("KORCH_STREAMS_SEED");
  return s ? static_cast<std::uint32_t>(std::strtoul(s, nullptr, 10)) ^ fallback : fallback;
}

ParallelResult require_same(const Comp& p, const std::vector<Item>& in, const ParallelOptions& o,
                            const std::string& what) {
  INFO(what << " program " << to_string(p) << " threads " << o.threads << " queue " << o.queue_capacity
            << " commit queue " << o.commit_queue_capacity << " input " << in.size());
  const RunResult s = run_sequential(p, in);
  const ParallelResult r = run_parallel(p, in, o);
  REQUIRE(r.output.size() == s.output.size());
  REQUIRE(r.output == s.output);
  REQUIRE(r.value == s.value);
  REQUIRE(r.starved == s.starved);
  // With a commit queue at the input (a bind, loop or conditional with a barrier at the top), the
  // committed count is exactly what the sequential run consumed.
  const auto kind = Layout(p, 1).root().kind;
  if (s.value && kind != Unit::Task && kind != Unit::Pipeline) REQUIRE(r.consumed == s.consumed);
  return r;
}

Comp random_cards_chain(std::mt19937& rng, Cards& cards, int& id) {
  const int n = 1 + static_cast<int>(rng() % 2);
  Comp c;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t a = 1 + rng() % 4, b = 1 + rng() % 4;
    cards.push_back({a, b});
    Comp t = mix("t" + std::to_string(id++), a, b, static_cast<int>(rng() % 10));
    c = c ? (rng() % 2 ? pipe(c, t) : par_pipe(c, t)) : t;
  }
  return c;
}

}  // namespace

TEST_CASE(
    "Motivating program: x <- t |>>>| c1 ; c2 x equals the sequential result for random cards, queues >= minQSize, "
    "1..4 threads") {
  std::mt19937 rng(seed_or(20261121));
  std::size_t outputs = 0, rollbacks = 0, tasks = 0;
  for (int trial = 0; trial < 120; ++trial) {
    Cards cards;
    int id = 0;
    Comp t = random_cards_chain(rng, cards, id);
    const std::size_t k1 = rng() % 12, k2 = 1 + rng() % 6;
    Comp prog = bind("x", par_pipe(t, taker("c1", k1, 1)), taker("c2", k2, 2, "x"));
    if (trial % 3 == 0) prog = repeat(prog);
    ParallelOptions o;
    o.threads = 1 + static_cast<unsigned>(rng() % 4);
    o.commit_queue_capacity = min_qsize(cards) + (rng() % 2 ? 0 : rng() % 8);
    o.queue_capacity = 1 + rng() % 8;
    o.steps_per_visit = 1 + static_cast<unsigned>(rng() % 64);
    o.timeout = std::chrono::seconds(30);
    const auto r = require_same(prog, iota_input(rng() % 300), o, "motivating");
    outputs += r.output.size();
    rollbacks += r.commits.rollbacks;
    tasks += r.tasks_run;
  }
  MESSAGE("motivating: " << outputs << " output items, " << rollbacks << " rollbacks, " << tasks
                         << " task activations");
  CHECK(outputs > 100);
  CHECK(rollbacks > 10);
}

TEST_CASE("Motivating program: commits are batched and the unneeded reads are rolled back") {
  auto prog = repeat(bind("x", par_pipe(mix("t", 2, 1), taker("c1", 5)), taker("c2", 1)));
  ParallelOptions o;
  o.commit_queue_capacity = 4;
  auto in = iota_input(2000);
  const auto expected = run_sequential(prog, in).output;
  // How many items one commit covers depends on how far c1 got between two commits, which on two
  // threads depends on timing; on one thread the trampoline's order fixes it.
  for (unsigned threads : {1u, 2u}) {
    o.threads = threads;
    auto r = run_parallel(prog, in, o);
    INFO("threads " << threads << ": " << r.commits.commits << " commits for " << r.commits.committed_items
                    << " items");
    CHECK(r.output == expected);
    CHECK(r.commits.rollbacks > 0);
    CHECK(r.commits.committed_items <= in.size());
    if (threads == 1) CHECK(r.commits.commits * 2 < r.commits.committed_items);  // batched: several items per commit(n)
  }
}

namespace {

struct Gen {
  std::mt19937 rng;
  int id = 0;
  int vars = 0;
  std::string name(const char* p) { return p + std::to_string(id++); }
  std::size_t pick(std::size_t n) { return rng() % n; }

  Comp cards_trans(int depth) {
    Comp t = mix(name("m"), 1 + pick(3), 1 + pick(3), static_cast<int>(pick(9)));
    if (depth > 0 && pick(2)) {
      Comp u = cards_trans(depth - 1);
      return pick(2) ? pipe(t, u) : par_pipe(t, u);
    }
    return t;
  }
  // A computer whose computer stage is a plain task (so commits can be counted through it).
  Comp simple_comp(const std::string& var) {
    Comp c = taker(name("c"), pick(5), static_cast<int>(pick(9)), var);
    if (pick(3) == 0) c = pipe(mix(name("m"), 1 + pick(2), 1 + pick(2)), c);
    return c;
  }
  // A computer that takes at least one item before anything else (safe inside loops).
  Comp consuming_comp(int depth, const std::string& var) {
    return seq(taker(name("c"), 1 + pick(3), 0, var), comp(depth - 1, var));
  }
  Comp comp(int depth, const std::string& var) {
    if (depth <= 0) return simple_comp(var);
    switch (pick(8)) {
      case 0: return par_pipe(cards_trans(depth - 1), simple_comp(var));
      case 1: return par_pipe(comp(depth - 1, var), trans(depth - 1));
      case 2: {
        const std::string x = "v" + std::to_string(vars++);
        return bind(x, comp(depth - 1, var), comp(depth - 1, x));
      }
      case 3: return times(static_cast<Value>(pick(3)), consuming_comp(depth, var));
      case 4: {
        const Value lim = static_cast<Value>(pick(1000));
        return until([lim](Value v) { return v >= lim; }, consuming_comp(depth, var));
      }
      case 5:
        return if_([var](const Env& e) { return var.empty() || e.at(var) % 2 == 0; }, comp(depth - 1, var),
                   comp(depth - 1, var));
      case 6: return standalone(comp(depth - 1, var));
      default: return pipe(cards_trans(0), simple_comp(var));
    }
  }
  Comp trans(int depth) {
    if (depth <= 0) return mix(name("m"), 1 + pick(3), 1 + pick(3));
    switch (pick(4)) {
      case 0: return par_pipe(trans(depth - 1), trans(depth - 1));
      case 1: return repeat(consuming_comp(depth, ""));
      case 2: return pipe(trans(depth - 1), trans(depth - 1));
      default: return cards_trans(depth);
    }
  }
};

}  // namespace

TEST_CASE("Random programs: parallel output equals sequential output (nothing lost, duplicated or reordered)") {
  Gen g{std::mt19937(seed_or(4242))};
  int ran = 0;
  std::size_t outputs = 0, tasks = 0;
  for (int trial = 0; trial < 150; ++trial) {
    Comp p = g.pick(3) == 0 ? g.trans(3) : g.comp(3, "");
    ParallelOptions o;
    o.threads = 1 + static_cast<unsigned>(g.pick(4));
    o.queue_capacity = 1 + g.pick(16);
    o.commit_queue_capacity = 64;
    o.steps_per_visit = 1 + static_cast<unsigned>(g.pick(32));
    o.timeout = std::chrono::seconds(30);
    // Idle threads sleep at once, after the default spin, or never: every wake-up path is exercised.
    const std::chrono::microseconds spins[] = {std::chrono::microseconds(0), ParallelOptions{}.idle_spin,
                                               std::chrono::microseconds::max()};
    o.idle_spin = spins[g.pick(3)];
    const auto r = require_same(p, iota_input(g.pick(200)), o, "random");
    outputs += r.output.size();
    tasks += r.tasks_run;
    ++ran;
  }
  MESSAGE("random: " << outputs << " output items, " << tasks << " task activations");
  CHECK(ran == 150);
  CHECK(outputs > 100);
}

namespace {
ParallelOptions quick(unsigned threads) {
  ParallelOptions o;
  o.threads = threads;
  o.queue_capacity = 4;
  o.commit_queue_capacity = 16;
  o.timeout = std::chrono::seconds(30);
  return o;
}
}  // namespace

TEST_CASE("Executor: starving is not finishing - a repeat whose body starves ends the program without a restart") {
  auto prog = repeat(bind("x", par_pipe(mix("t", 2, 1), taker("c1", 3)), taker("c2", 2, 0, "x")));
  for (std::size_t n : {0u, 1u, 5u, 6u, 7u, 17u, 100u}) {
    for (unsigned threads = 1; threads <= 3; ++threads) {
      const auto in = iota_input(n);
      const auto s = run_sequential(prog, in);
      const auto r = run_parallel(prog, in, quick(threads));
      CHECK(r.starved);
      CHECK_FALSE(r.value);
      CHECK(r.output == s.output);
    }
  }
}

TEST_CASE(
    "Executor: a finished computer sends FINISHED upstream (the endless producer stops) and downstream (the consumer "
    "drains)") {
  // t |>>>| c1 |>>>| d over a long input: c1 finishes after 5 takes; t must stop and d must drain.
  auto prog = par_pipe(par_pipe(mix("t", 1, 2), taker("c1", 5)), mix("d", 2, 1));
  const auto in = iota_input(200000);
  for (unsigned threads = 1; threads <= 3; ++threads) {
    const auto r = run_parallel(prog, in, quick(threads));
    const auto s = run_sequential(prog, in);
    CHECK(r.value == s.value);
    CHECK(r.output == s.output);
    CHECK(r.output.size() == 2);  // 5 items through d(2/1): two rounds, the fifth item is a partial round
  }
  // c |>>>| t: the computer upstream finishes, the transformer downstream drains every full round
  auto up = bind("x", par_pipe(taker("c", 7), mix("t", 3, 1)), taker("after", 2));
  for (unsigned threads = 1; threads <= 3; ++threads) {
    CHECK(run_parallel(up, iota_input(50), quick(threads)).output == run_sequential(up, iota_input(50)).output);
  }
}

TEST_CASE("Executor: until stops on its predicate and the continuation starts exactly at the first unneeded item") {
  auto body = par_pipe(mix("t", 3, 2), taker("c1", 2));
  auto prog = bind("v", until([](Value v) { return v > 600; }, body), taker("rest", 4));
  const auto in = iota_input(400);
  const auto s = run_sequential(prog, in);
  REQUIRE(s.value);
  for (unsigned threads = 1; threads <= 4; ++threads) {
    const auto r = run_parallel(prog, in, quick(threads));
    CHECK(r.output == s.output);
    CHECK(r.value == s.value);
    CHECK(r.consumed == s.consumed);
  }
}

TEST_CASE("Trampoline: one thread runs a ten-stage pipeline; removing the last task of a ring is fine") {
  Comp p = mix("s0", 1, 1);
  for (int i = 1; i < 10; ++i) p = par_pipe(p, mix("s" + std::to_string(i), 1 + i % 3, 1 + (i + 1) % 3));
  const auto in = iota_input(3000);
  const auto s = run_sequential(p, in);
  for (unsigned threads : {1u, 2u, 5u}) {
    auto o = quick(threads);
    o.steps_per_visit = 1;
    CHECK(run_parallel(p, in, o).output == s.output);
  }
  // a program that is over before it starts: times 0 around a barrier
  auto none = times(0, par_pipe(mix("t", 1, 1), taker("c", 1)));
  const auto r = run_parallel(none, in, quick(2));
  CHECK(r.value == 0);
  CHECK(r.output.empty());
}

TEST_CASE("Scheduler: an idle thread sleeps after idle_spin and wakes for the next item; idle_spin max never sleeps") {
  // The first stage takes 1 ms per item, so the thread of the second stage is idle for most of the run.
  auto slow = map("slow", {1, 1}, [](const Item* in, Item* out) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    out[0] = in[0];
  });
  auto prog = par_pipe(slow, mix("t", 2, 1));
  const auto in = iota_input(40);
  const auto s = run_sequential(prog, in);
  auto o = quick(2);
  o.idle_spin = std::chrono::microseconds(50);
  const auto r = run_parallel(prog, in, o);
  CHECK(r.output == s.output);
  CHECK(r.parks > 0);
  o.idle_spin = std::chrono::microseconds::max();
  const auto never = run_parallel(prog, in, o);
  CHECK(never.output == s.output);
  CHECK(never.parks == 0);
  // More scheduler threads than stages (and than cores here): the extra threads sleep too.
  o = quick(6);
  o.idle_spin = std::chrono::microseconds(0);
  const auto many = run_parallel(prog, in, o);
  CHECK(many.output == s.output);
  CHECK(many.parks > 0);
}

TEST_CASE("Scheduler: idle polling shrinks when waits are longer than idle_spin") {
  // Every item takes 2 ms in the first stage, so the two other threads wait about that long each
  // time: longer than idle_spin (1 ms), so polling cannot catch them. Polling for the whole 1 ms
  // every time would cost about items x 2 threads x 1 ms; the adaptive budget halves after each
  // such wait and soon sleeps at once.
  auto slow = map("slow", {1, 1}, [](const Item* in, Item* out) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    out[0] = in[0];
  });
  auto prog = par_pipe(par_pipe(slow, mix("a", 1, 1)), mix("b", 1, 1));
  const auto in = iota_input(40);
  auto o = quick(3);
  o.idle_spin = std::chrono::milliseconds(1);
  const auto r = run_parallel(prog, in, o);
  CHECK(r.output == run_sequential(prog, in).output);
  CHECK(r.parks > 0);
  const double fixed_polling = static_cast<double>(in.size()) * 2 * 1e-3;
  MESSAGE("polled " << r.spin_seconds << " s, against about " << fixed_polling << " s at a fixed idle_spin");
  CHECK(r.spin_seconds < 0.25 * fixed_polling);
}

#if defined(__linux__)
namespace {

double cpu_seconds(clockid_t clock) {
  timespec t{};
  REQUIRE(clock_gettime(clock, &t) == 0);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Threads that keep a core busy until destroyed, standing for another program beside the run.
class BusyThreads {
 public:
  explicit BusyThreads(unsigned n) {
    for (unsigned i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
    }
  }
  ~BusyThreads() {
    stop_.store(true);
    for (auto& t : threads_) t.join();
  }
  BusyThreads(const BusyThreads&) = delete;
  BusyThreads& operator=(const BusyThreads&) = delete;

  // The CPU time all of them have had so far.
  double cpu() {
    double sum = 0;
    for (auto& t : threads_) {
      clockid_t clock{};
      REQUIRE(pthread_getcpuclockid(t.native_handle(), &clock) == 0);
      sum += cpu_seconds(clock);
    }
    return sum;
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

}  // namespace

TEST_CASE(
    "Scheduler: beside busy threads, with more scheduler threads than cores, idle threads sleep rather than poll") {
  // Other threads keep every core busy, and the run has twice as many scheduler threads as cores:
  // a scheduler thread that polled would keep the thread it waits for off a core, and take cores
  // from the other program. The run must stay correct, sleep, and leave the busy threads most of
  // the CPU; the timeout is a watchdog.
  const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
  BusyThreads busy(cores);
  Comp p = mix("s0", 1, 1);
  for (int i = 1; i < 8; ++i) p = par_pipe(p, mix("s" + std::to_string(i), 1 + i % 3, 1 + (i + 1) % 3));
  const auto in = iota_input(100000);  // long enough that a few stretched polls do not dominate
  auto o = quick(2 * cores);
  o.queue_capacity = 64;
  o.timeout = std::chrono::seconds(120);
  const double process0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID), busy0 = busy.cpu();
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_parallel(p, in, o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double busy_cpu = busy.cpu() - busy0;
  const double run_cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - process0 - busy_cpu;
  const double sequential0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
  CHECK(r.output == run_sequential(p, in).output);
  const double sequential_cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - sequential0;
  MESSAGE(o.threads << " scheduler threads on " << cores << " cores beside " << cores << " busy threads: " << wall
                    << " s, " << r.parks << " sleeps, " << r.spin_seconds << " s polling; CPU: run " << run_cpu
                    << " s, busy threads " << busy_cpu << " s, the program on one thread " << sequential_cpu << " s");
  // The kernel shares a CPU fairly among the threads runnable on it, so scheduler threads that
  // polled whenever idle beside the busy threads would take about twice their CPU (twice as many
  // threads), most of it polling. Sleeping ones take less than the busy threads. When the kernel
  // happens to place the run's threads on CPUs of their own, they poll and hand items over at once,
  // taking little more CPU than the program needs on one thread; then they need not sleep at all.
  const bool shared_cpus = run_cpu >= 4 * sequential_cpu;
  if (shared_cpus) {
    CHECK(r.parks > 0);
    CHECK(run_cpu < busy_cpu);
  }
  // Polling counts only time on a core between sweeps; threads that polled whenever idle would
  // poll most of their time, these may poll a quarter of it. A poll window stretches when the
  // machine preempts the polling thread (its clock runs on), and 20 ms more cover a few such
  // windows on a loaded machine.
  CHECK(r.spin_seconds < 0.25 * wall * o.threads + 0.02);
}
#endif
