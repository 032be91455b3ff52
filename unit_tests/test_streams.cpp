// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stream programs: commit-count formulas, queues and their invariants, the reference
// semantics, execution maps and plans, and the parallel executor against the sequential one.
#include "test_streams_support.hpp"

#include <doctest/doctest.h>

#include <korch/streams.hpp>
#include <korch/thread_team.hpp>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>

using namespace korch::streams;
using namespace korch::streams::testing;

TEST_CASE("takes: the seed's worked example ceil(ceil(k/m2)*n2/m1)*n1") {
  const Cards cards{{3, 2}, {2, 5}};  // t1(3/2) >>> t2(2/5) >>> c
  for (std::uint64_t k = 0; k < 40; ++k) {
    const std::uint64_t j = (k + 4) / 5 * 2;
    const std::uint64_t expect = (j + 1) / 2 * 3;
    CHECK(takes(cards, k) == expect);
  }
  CHECK(takes(cards, 7) == 6);
  CHECK(takes({}, 9) == 9);
  CHECK(takes({{4, 1}}, 3) == 12);
}

TEST_CASE("takesWithHistory is the difference of takes; minQSize is takes 1") {
  const Cards cards{{3, 2}, {2, 5}};
  CHECK(takes_with_history(cards, 0, 7) == takes(cards, 7));
  CHECK(takes_with_history(cards, 5, 1) == takes(cards, 6) - takes(cards, 5));
  CHECK(takes_with_history(cards, 4, 1) == 0);  // the 5th take is served by the same round
  CHECK(min_qsize(cards) == 3);
  CHECK(min_qsize({{2, 1}, {4, 2}}) == 8);  // ceil(ceil(1/2)*4/1)*2
  CHECK_THROWS_AS(takes({{0, 1}}, 1), korch::Error);
}

TEST_CASE("CommitQueue: back never passes front (invariant 1), full queue refuses writes") {
  CommitQueue<int> q("q1", 3);
  for (int i = 0; i < 3; ++i) CHECK(q.try_write(i));
  CHECK(q.full());
  CHECK_FALSE(q.try_write(9));
  int x = 0;
  CHECK(q.try_read(x));  // an optimistic read frees nothing
  CHECK_FALSE(q.try_write(9));
  CHECK_THROWS_WITH_AS(q.write(9), doctest::Contains("'q1' is full"), korch::Error);
  q.commit(1);
  CHECK(q.try_write(3));
}

TEST_CASE("CommitQueue: front never passes the read pointer (invariant 2)") {
  CommitQueue<int> q("q2", 4);
  q.write(1);
  q.write(2);
  CHECK(q.read() == 1);
  CHECK_THROWS_WITH_AS(q.commit(2), doctest::Contains("invariant 2"), korch::Error);
  CHECK(q.front() == 0);  // unchanged by the refused commit
  q.commit(1);
  CHECK(q.front() == 1);
}

TEST_CASE("CommitQueue: the read pointer never passes back (invariant 3); rollback rereads") {
  CommitQueue<int> q("q3", 4);
  CHECK_THROWS_WITH_AS(q.read(), doctest::Contains("invariant 3"), korch::Error);
  q.write(10);
  q.write(11);
  q.write(12);
  CHECK(q.read() == 10);
  CHECK(q.read() == 11);
  q.commit(1);
  CHECK(q.read() == 12);
  q.rollback();
  CHECK(q.read_pointer() == 1);
  CHECK(q.read() == 11);
  CHECK(q.read() == 12);
  CHECK_THROWS_AS(q.read(), korch::Error);
}

TEST_CASE("SpscRing: concurrent producer and consumer see every item once, in order") {
  SpscRing<std::uint64_t> r("ring", 7);
  const std::uint64_t n = 200000;
  std::thread prod([&] {
    Backoff backoff;
    for (std::uint64_t i = 0; i < n;) {
      if (r.try_push(i)) {
        ++i;
        backoff.reset();
      } else {
        backoff.wait();
      }
    }
  });
  std::uint64_t expect = 0, x = 0;
  Backoff backoff;
  while (expect < n) {
    if (r.try_pop(x)) {
      REQUIRE(x == expect);
      ++expect;
      backoff.reset();
    } else {
      backoff.wait();
    }
  }
  prod.join();
  CHECK(r.empty());
}

TEST_CASE("CommitQueue: concurrent writer, optimistic reader and committer with rollbacks keep the stream exact") {
  CommitQueue<std::uint64_t> q("stress", 16);
  const std::uint64_t n = 100000;
  std::thread prod([&] {
    Backoff backoff;
    for (std::uint64_t i = 0; i < n;) {
      if (q.try_write(i)) {
        ++i;
        backoff.reset();
      } else {
        backoff.wait();
      }
    }
  });
  std::mt19937 rng(7);
  std::uint64_t committed = 0, x = 0;
  while (committed < n) {
    // read a few optimistically, commit some of them, roll back the rest
    const std::uint64_t want = 1 + rng() % 8;
    std::uint64_t got = 0;
    Backoff backoff;
    while (got < want && committed + got < n) {
      if (q.try_read(x)) {
        REQUIRE(x == committed + got);
        ++got;
        backoff.reset();
      } else {
        backoff.wait();
      }
    }
    const std::uint64_t keep = got == 0 ? 0 : 1 + rng() % got;
    q.commit(keep);
    committed += keep;
    q.rollback();
  }
  prod.join();
  CHECK(q.front() == n);
}

// ---- reference semantics ----

TEST_CASE("Sequential: a transformer round consumes n and emits m; a partial round emits nothing") {
  auto r =
      run_sequential(map("sum2", {2, 1}, [](const Item* in, Item* out) { out[0] = in[0] + in[1]; }), {1, 2, 3, 4, 5});
  CHECK(r.output == std::vector<Item>{3, 7});
  CHECK(r.starved);
  CHECK_FALSE(r.value);
}

TEST_CASE("Sequential: bind passes the value; a computer downstream of a transformer loses the rest of its round") {
  // x <- (dup >>> take 3) ; take x
  auto dup = map("dup", {1, 2}, [](const Item* in, Item* out) { out[0] = out[1] = in[0]; });
  auto first = pipe(dup, taker("c1", 3));
  auto p = bind("x", first,
                take_block(
                    "c2", [](const Env& e) { return static_cast<std::size_t>(e.at("x") % 3 + 1); },
                    [](const Item* in, std::size_t n, std::vector<Item>& out) {
                      for (std::size_t i = 0; i < n; ++i) out.push_back(in[i]);
                      return Value(n);
                    }));
  auto r = run_sequential(p, iota_input(10));
  // dup consumed 2 inputs (rounds for takes 1..3); c1 saw 1,1,2 -> sum 4 -> c2 takes 4%3+1 = 2 items: 3, 4
  CHECK(r.output == std::vector<Item>{3, 3, 6, 3, 4});
  CHECK(r.value == 2);
  CHECK(r.consumed == 4);
  CHECK(r.consumed == takes({{1, 2}}, 3) + 2);
}

TEST_CASE("Sequential: repeat restarts on a normal finish and stops when its body starves") {
  auto r = run_sequential(repeat(taker("t2", 2)), iota_input(5));
  CHECK(r.output.size() == 4);  // two full bodies; the third starved after one take
  CHECK(r.starved);
  CHECK(r.consumed == 5);
}

TEST_CASE("Sequential: times runs its body n times and returns the last value; until stops on its predicate") {
  auto r = run_sequential(times(3, taker("t", 1)), iota_input(10));
  CHECK(r.output.size() == 3);
  CHECK(r.value == 3);
  auto u = run_sequential(until([](Value v) { return v >= 4; }, taker("t", 1)), iota_input(10));
  CHECK(u.value == 4);
  CHECK(u.consumed == 4);
  auto z = run_sequential(seq(times(0, taker("t", 1)), ret("r", [](const Env&) { return Value(42); })), iota_input(3));
  CHECK(z.value == 42);
  CHECK(z.consumed == 0);
}

TEST_CASE("Sequential: if chooses a branch from the Env") {
  auto p = bind("x", taker("h", 1),
                if_([](const Env& e) { return e.at("x") == 1; }, taker("a", 2, 100), taker("b", 1, 200)));
  auto r = run_sequential(p, iota_input(5));
  CHECK(r.output == std::vector<Item>{3, 106, 109});
}

TEST_CASE("DSL: two computers in a pipe, a repeated transformer and an unbound variable are errors") {
  CHECK_THROWS_AS(pipe(taker("a", 1), taker("b", 1)), korch::Error);
  CHECK_THROWS_AS(repeat(mix("t", 1, 1)), korch::Error);
  CHECK_THROWS_AS(bind("x", mix("t", 1, 1), taker("b", 1)), korch::Error);
  CHECK_THROWS_WITH_AS(run_sequential(taker("b", 1, 0, "nope"), iota_input(3)), doctest::Contains("'nope'"),
                       korch::Error);
}

// ---- maps and plans ----

TEST_CASE("Plan: x <- t |>>>| c1 ; c2 x has continuations c1 -> {c2}, first t, last c1") {
  auto p = bind("x", par_pipe(mix("t", 2, 1), taker("c1", 3)), taker("c2", 1, 0, "x"));
  Layout l(p, 2);
  REQUIRE(l.tasks().size() == 3);
  CHECK(l.map().text() == "Seq [Par [Atom 0, Atom 1], Atom 2]");
  CHECK(l.plan().continuations.at(1) == std::set<TaskId>{2});
  CHECK(l.plan().continuations.at(2).empty());
  CHECK(l.plan().first_task.at(1) == 0);
  CHECK(l.plan().last_task.at(1) == 1);
  CHECK(l.plan().initially_active == std::set<TaskId>{0, 1});
  CHECK(l.tasks()[0].thread != l.tasks()[1].thread);
  CHECK(l.dot().find("t1 -> t2 [style=dashed") != std::string::npos);
}

TEST_CASE("Plan: barrier-free subtrees merge into one task; repeat loops back to its body") {
  auto body =
      bind("x", par_pipe(mix("a", 1, 1) >> mix("b", 2, 1), taker("c1", 2)), seq(taker("c2", 1), taker("c3", 1)));
  Layout l(repeat(body), 2);
  CHECK(l.tasks().size() == 3);  // a>>>b, c1, c2;c3
  CHECK(l.map().text() == "Repeat [Seq [Par [Atom 0, Atom 1], Atom 2]]");
  CHECK(l.plan().continuations.at(2) == std::set<TaskId>{0, 1});
  Layout flat(mix("a", 1, 1) >> taker("c", 2), 3);
  CHECK(flat.map().text() == "Atom 0");
}

TEST_CASE("Plan: more standalone components than threads gives a warning") {
  auto p = standalone(mix("a", 1, 1)) | standalone(mix("b", 1, 1)) | mix("c", 1, 1);
  Layout l(p, 2);
  CHECK(l.warnings().size() == 1);
  Layout ok(p, 3);
  CHECK(ok.warnings().empty());
  CHECK(ok.tasks()[0].thread != ok.tasks()[1].thread);
  CHECK(ok.tasks()[2].thread == 2);
}

TEST_CASE("Executor: a commit queue below minQSize is an error naming the queue") {
  auto p = bind("x", par_pipe(mix("t1", 2, 1) >> mix("t2", 4, 2), taker("c1", 3)), taker("c2", 2));
  ParallelOptions o;
  o.commit_queue_capacity = 7;  // minQSize = takes [(2,1),(4,2)] 1 = 8
  CHECK_THROWS_WITH_AS(run_parallel(p, iota_input(50), o),
                       doctest::Contains("commit queue 'input' has capacity 7, below minQSize 8"), korch::Error);
  o.commit_queue_capacity = 8;
  CHECK(run_parallel(p, iota_input(50), o).output == run_sequential(p, iota_input(50)).output);
}

TEST_CASE("Executor: options that cannot work are errors naming the option") {
  auto p = mix("t", 1, 1) | mix("u", 1, 1);
  ParallelOptions o;
  o.queue_capacity = 0;
  CHECK_THROWS_WITH_AS(run_parallel(p, iota_input(5), o), doctest::Contains("queue_capacity 0"), korch::Error);
  o = ParallelOptions{};
  o.idle_spin = std::chrono::microseconds(-5);
  CHECK_THROWS_WITH_AS(run_parallel(p, iota_input(5), o), doctest::Contains("idle_spin is -5 us"), korch::Error);
  o.idle_spin = std::chrono::microseconds(0);
  CHECK(run_parallel(p, iota_input(5), o).output == run_sequential(p, iota_input(5)).output);
}

TEST_CASE("Executor: an exception in a component comes back as a korch::Error naming its task") {
  auto bad = map("boom", {1, 1}, [](const Item* in, Item* out) {
    if (in[0] > 100) throw std::runtime_error("too big");
    out[0] = in[0];
  });
  ParallelOptions o;
  o.timeout = std::chrono::seconds(20);
  CHECK_THROWS_WITH_AS(run_parallel(bad | mix("t", 1, 1), iota_input(500), o), doctest::Contains("boom"), korch::Error);
}

TEST_CASE("Executor: the scheduler threads come from a caller's ThreadTeam") {
  korch::ThreadTeam team("stream-team", 3);
  auto p = mix("a", 1, 1) | mix("b", 2, 3) | mix("c", 3, 1);
  ParallelOptions o;
  o.threads = 3;
  auto in = iota_input(1000);
  CHECK(run_parallel(p, in, o, &team).output == run_sequential(p, in).output);
  CHECK(run_parallel(p, in, o, &team).output == run_sequential(p, in).output);  // the team is reusable
  o.threads = 4;
  CHECK_THROWS_AS(run_parallel(p, in, o, &team), korch::Error);
}
