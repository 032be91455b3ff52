// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// User signals that sources, enumerates and aggregates raise through their raise_after hooks,
// after their outputs: checked per instance against a sequential model, on one-lane and
// multi-lane teams, and a hook that raises more than it declares.
#include <doctest/doctest.h>

#include <korch/dataflow.hpp>
#include <korch/error.hpp>

#include "test_dataflow_graphs.hpp"
#include "test_dataflow_signal_model.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <string_view>
#include <type_traits>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_dataflow_signal_hooks {

using namespace test_dataflow_signal_model;  // NOLINT: the suites' shared vocabulary
using test_dataflow_graphs::Pass;            // no handler: forwards every signal
using test_dataflow_graphs::Range;

namespace {
enum OwnKind : int { END = 4, EVEN = 5, ELEMENT = 6 };

// The items 0..n-1; after item i a BEFORE signal when i % 7 == 0 and an AFTER Mark when i % 5 == 0.
struct MarkedSource {
  using value_type = int;
  static constexpr int raises = 2;
  long n;
  long size() const { return n; }
  KOKKOS_INLINE_FUNCTION int operator()(long i) const { return static_cast<int>(i); }
  template <class Raise>
  KOKKOS_INLINE_FUNCTION void raise_after(long i, Raise& raise) const {
    const int x = static_cast<int>(i);
    if (x % 7 == 0) raise.raise(BEFORE, x);
    if (x % 5 == 0) raise.raise(df::UserSignal::make(AFTER, Mark{x, x * x, x / 2.0}));
  }
};
// source -> pass -> double -> sink, sequentially: item 2x, then its signals (AFTER seen by double).
std::vector<Event> source_model(const std::vector<int>& xs) {
  std::vector<Event> ev;
  long long items = 0;
  for (const int x : xs) {
    ev.push_back({false, 0, 2LL * x, 0});
    ++items;
    if (x % 7 == 0) ev.push_back({true, BEFORE, x, 0});
    if (x % 5 == 0) ev.push_back({true, SEEN, x, items});
  }
  return ev;
}

// Range with signals: ELEMENT e after each element e with e % 3 == 0, END p after a parent's last.
struct MarkedRange : Range {
  static constexpr int raises = 2;
  template <class Raise>
  KOKKOS_INLINE_FUNCTION void raise_after(const int& p, int i, Raise& raise) const {
    const int e = element(p, i);
    if (e % 3 == 0) raise.raise(ELEMENT, e);
    if (i == count(p) - 1) raise.raise(END, p);
  }
};
void range_signals(int p, std::vector<Event>& ev) {
  for (int i = 0; i < p % 4; ++i) {
    ev.push_back({false, 0, p * 10 + i, 0});
    if ((p * 10 + i) % 3 == 0) ev.push_back({true, ELEMENT, p * 10 + i, 0});
    if (i == p % 4 - 1) ev.push_back({true, END, p, 0});
  }
}
std::vector<Event> range_model(const std::vector<int>& parents) {
  std::vector<Event> ev;
  for (const int p : parents) range_signals(p, ev);
  return ev;
}

// Per parent: outputs the parent and raises EVEN (payload: the sum) after it when its sum is even.
struct SumMarked {
  using input_type = int;
  using parent_type = int;
  using accumulator_type = int;
  using output_type = int;
  static constexpr int raises = 1;
  KOKKOS_INLINE_FUNCTION int init(const int& p) const { return p; }
  KOKKOS_INLINE_FUNCTION void add(int& acc, const int& x) const { acc += x; }
  KOKKOS_INLINE_FUNCTION int finish(const int& p, const int&) const { return p; }
  template <class Raise>
  KOKKOS_INLINE_FUNCTION void raise_after(const int&, const int& acc, Raise& raise) const {
    if (acc % 2 == 0) raise.raise(EVEN, acc);
  }
};
// enumerate (MarkedRange) -> pass -> aggregate (SumMarked) -> double -> sink: a parent's element
// signals pass the aggregate before its output 2p, which its own signal follows.
std::vector<Event> aggregate_model(const std::vector<int>& parents) {
  std::vector<Event> ev;
  for (const int p : parents) {
    std::vector<Event> elements;
    range_signals(p, elements);
    for (const Event& e : elements)
      if (e.signal) ev.push_back(e);
    ev.push_back({false, 0, 2LL * p, 0});
    if (range_sum(p) % 2 == 0) ev.push_back({true, EVEN, range_sum(p), 0});
  }
  return ev;
}
}  // namespace

TEST_CASE(
    "User signals raised by a source follow their items through a forwarding node and a handler "
    "(exact per instance)") {
  const int n = 1500;
  auto g = df::graph("source_signals")
               .source("in", MarkedSource{n})
               .node("pass", Pass{}, "in")
               .node("double", Double{}, "pass")
               .sink<int>("out", "double", n);
  for (int width : {1, 3, 8, 32})
    for (double scale : {1.0, 4.0})
      for (int instances : {1, 4}) {
        CAPTURE(width);
        CAPTURE(scale);
        CAPTURE(instances);
        const auto [st, expected] = check_instances(
            g, opts(width, scale, instances, 40), n, [](int v) { return v / 2; }, source_model);
        CHECK(st.node("pass").signals == static_cast<long long>(expected));
        CHECK(st.node("double").signals == static_cast<long long>(expected));
      }
}

TEST_CASE(
    "User signals raised by an enumerate follow their elements, after the parent's boundary, to a "
    "sink inside the region and through an aggregate that raises its own after each result") {
  const int n = 700;
  auto elements = df::graph("enumerate_signals")
                      .source("in", df::from_view(iota(n)))
                      .enumerate("elements", MarkedRange{}, "in", 3)
                      .node("pass", Pass{}, "elements")
                      .sink<int>("out", "pass", n * 3);
  auto sums = df::graph("aggregate_signals")
                  .source("in", df::from_view(iota(n)))
                  .enumerate("elements", MarkedRange{}, "in", 2)
                  .node("pass", Pass{}, "elements")
                  .aggregate("sum", SumMarked{}, "pass", "elements")
                  .node("double", Double{}, "sum")
                  .sink<int>("out", "double", n);
  for (int width : {1, 4, 32})
    for (double scale : {1.0, 3.0})
      for (int instances : {1, 3}) {
        CAPTURE(width);
        CAPTURE(scale);
        CAPTURE(instances);
        const df::Options o = opts(width, scale, instances, 24);
        const auto [st, expected] = check_instances(
            elements, o, n, [](int v) { return v / 10; }, range_model);
        // pass sees every user signal once, and the boundary of every parent
        CHECK(st.node("pass").signals == static_cast<long long>(expected) + n);
        const auto [st2, expected2] = check_instances(
            sums, o, n, [](int v) { return v / 2; }, aggregate_model);
        CHECK(st2.node("double").signals == static_cast<long long>(expected2));
        CHECK(st2.node("pass").signals == st2.node("sum").signals);
      }
}

TEST_CASE(
    "User signals raised by sources, enumerates and aggregates on multi-lane teams are placed as on "
    "one-lane teams" *
    doctest::skip(std::string_view(Kokkos::DefaultExecutionSpace::name()) == "Serial")) {
  const int team = std::min(4, static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()));
  REQUIRE_MESSAGE(team >= 2, "multi-lane teams need at least 2 threads in the default space (OMP_NUM_THREADS)");
  const int n = 500;
  auto sources = df::graph("source_signals").source("in", MarkedSource{n}).node("double", Double{}, "in");
  auto sums = df::graph("aggregate_signals")
                  .source("in", df::from_view(iota(n)))
                  .enumerate("elements", MarkedRange{}, "in", 2)
                  .aggregate("sum", SumMarked{}, "elements", "elements")
                  .node("double", Double{}, "sum");
  for (int width : {1, 2, 8, 32}) {
    CAPTURE(width);
    df::Options o = opts(width, 2.0, 3, 24);
    o.team_size = team;
    check_instances(
        sources.sink<int>("out", "double", n), o, n, [](int v) { return v / 2; }, source_model);
    check_instances(
        sums.sink<int>("out", "double", n), o, n, [](int v) { return v / 2; }, aggregate_model);
  }
}

namespace {
struct SourceRaisesTooMany {
  using value_type = int;
  static constexpr int raises = 1;
  long size() const { return 30; }
  KOKKOS_INLINE_FUNCTION int operator()(long i) const { return static_cast<int>(i); }
  template <class Raise>
  KOKKOS_INLINE_FUNCTION void raise_after(long i, Raise& raise) const {
    if (i == 5) {
      raise.raise(AFTER, 1);
      raise.raise(AFTER, 2);
    }
  }
};
}  // namespace

TEST_CASE("User signals: a source raising more per item than it declares is reported as korch::Error") {
  auto g = df::graph("source_too_many").source("in", SourceRaisesTooMany{}).sink<int>("out", "in", 30);
  auto p = df::make_pipeline(g, opts(4, 2.0, 1, 0));
  CHECK_THROWS_WITH_AS(p.run(), doctest::Contains("F::raises"), korch::Error);
}

}  // namespace test_dataflow_signal_hooks
