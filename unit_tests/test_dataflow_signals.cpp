// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// User signals in dataflow pipelines: a filter raises signals among its outputs, a pass-through
// node forwards them, a handler re-raises them with what it saw, and the sink logs them; the
// order of signals and items is checked per instance against a sequential model on the host, for
// several vector widths, queue scales and instance counts, and together with region boundaries;
// sources, enumerates and aggregates raise their own signals after their outputs.
#include <doctest/doctest.h>

#include <korch/dataflow.hpp>
#include <korch/error.hpp>

#include "test_dataflow_graphs.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_dataflow_signals {

namespace df = korch::dataflow;
using test_dataflow_graphs::Pass;  // no handler: forwards every signal
using test_dataflow_graphs::Range;
using test_dataflow_graphs::Sum;

namespace {

enum Kind : int { BEFORE = 3, AFTER = 1, SEEN = 2 };

// a user struct as payload
struct Mark {
  int after;
  int square;
  double half;
};
struct Seen {
  int after;
  int ok;
  long long consumed;
};

// keeps x unless x % 3 == 1; raises BEFORE x when x % 7 == 0 (kept or not) and AFTER a kept x
// when x % 5 == 0 (payload Mark)
struct KeepAndMark {
  using input_type = int;
  using outputs = df::Outputs<df::Out<int, 1>>;
  static constexpr int raises = 2;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const int& x, Emit& emit) const {
    if (x % 7 == 0) emit.raise(BEFORE, x);
    if (x % 3 == 1) return;
    emit(x);
    if (x % 5 == 0) emit.raise(df::UserSignal::make(AFTER, Mark{x, x * x, x / 2.0}));
  }
};

// doubles items; replaces AFTER by SEEN (what it saw and when), forwards the others
struct Double {
  using input_type = int;
  using outputs = df::Outputs<df::Out<int, 1>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const int& x, Emit& emit) const {
    emit(2 * x);
  }
  template <class Ctx>
  KOKKOS_INLINE_FUNCTION void on_signal(const df::UserSignal& s, Ctx& ctx) const {
    if (s.kind != AFTER) {
      ctx.forward();
      return;
    }
    const Mark m = s.payload<Mark>();
    const int ok = m.square == m.after * m.after && m.half == m.after / 2.0;
    ctx.raise(SEEN, Seen{m.after, ok, ctx.consumed()});
  }
};

Kokkos::View<int*> iota(int n) {
  Kokkos::View<int*> d("ints", n);
  auto h = Kokkos::create_mirror_view(d);
  for (int i = 0; i < n; ++i) h(i) = i;
  Kokkos::deep_copy(d, h);
  return d;
}

// One event at a sink: an item (value) or a user signal (kind, payload fields).
struct Event {
  bool signal;
  int kind;
  long long a, b;
  bool operator==(const Event& o) const { return signal == o.signal && kind == o.kind && a == o.a && b == o.b; }
};

// The sequential model of the chain for inputs xs in order (one instance).
std::vector<Event> chain_model(const std::vector<int>& xs) {
  std::vector<Event> ev;
  long long items = 0;
  for (const int x : xs) {
    if (x % 7 == 0) ev.push_back({true, BEFORE, x, 0});
    if (x % 3 == 1) continue;
    ev.push_back({false, 0, 2LL * x, 0});
    ++items;
    if (x % 5 == 0) ev.push_back({true, SEEN, x, items});
  }
  return ev;
}

// What one instance delivered: its items and logged signals merged by position.
std::vector<Event> delivered(const std::vector<int>& values, const std::vector<df::SignalRecord>& sigs) {
  std::vector<Event> ev;
  std::size_t s = 0;
  for (std::size_t k = 0; k <= values.size(); ++k) {
    for (; s < sigs.size() && sigs[s].position == static_cast<long long>(k); ++s) {
      const df::UserSignal& u = sigs[s].signal;
      if (u.kind == SEEN) {
        const Seen seen = u.payload<Seen>();
        ev.push_back({true, SEEN, seen.ok ? seen.after : -1, seen.consumed});
      } else {
        ev.push_back({true, u.kind, u.payload<int>(), 0});
      }
    }
    if (k < values.size()) ev.push_back({false, 0, values[k], 0});
  }
  if (s != sigs.size()) ev.push_back({true, -1, -1, -1});  // a signal past the last item + 1
  return ev;
}

df::Options opts(int width, double scale, int instances, int chunk) {
  df::Options o;
  o.vector_width = width;
  o.queue_scale = scale;
  o.instances = instances;
  o.chunk = chunk;
  o.signal_log = 4096;
  return o;
}

// Runs graph g (n inputs 0..n-1, sink "out") with `o`: every instance's items and signals, merged
// by position, equal model(the inputs of the chunks it claimed). input_of(v) is the input an output
// value v came from. Returns the run's statistics and the number of user signals expected.
template <class G, class InputOf, class Model>
std::pair<df::RunStats, std::size_t> check_instances(const G& g, const df::Options& o, int n, InputOf input_of,
                                                     Model model) {
  const int chunk = o.chunk;
  auto p = df::make_pipeline(g, o);
  const auto st = p.run();
  const auto out = p.template output<int>("out");
  const auto sigs = p.signals("out");
  CHECK(p.signal_count("out") == sigs.size());
  // the chunks each instance claimed, in order, from the items it delivered
  std::map<int, std::vector<int>> inputs, values;
  std::map<int, std::vector<df::SignalRecord>> logged;
  for (std::size_t k = 0; k < out.values.size(); ++k) {
    const int r = out.instance[k];
    const int c = input_of(out.values[k]) / chunk;
    auto& in = inputs[r];
    if (in.empty() || in.back() / chunk != c)
      for (int x = c * chunk; x < (c + 1) * chunk && x < n; ++x) in.push_back(x);
    values[r].push_back(out.values[k]);
  }
  for (const auto& s : sigs) logged[s.instance].push_back(s);
  std::size_t total = 0, expected_signals = 0;
  for (const auto& instance_inputs : inputs) {
    const int r = instance_inputs.first;
    const std::vector<int>& xs = instance_inputs.second;
    CAPTURE(r);
    total += xs.size();
    const auto m = model(xs);
    for (const auto& e : m) expected_signals += e.signal ? 1 : 0;
    CHECK(delivered(values[r], logged[r]) == m);
  }
  CHECK(total == static_cast<std::size_t>(n));
  CHECK(sigs.size() == expected_signals);
  return {st, expected_signals};
}

// The chain source -> keep -> pass -> double -> sink over 0..n-1 with `o`.
void check_chain(const df::Options& o) {
  const int n = 2400;
  auto g = df::graph("signals")
               .source("in", df::from_view(iota(n)))
               .node("keep", KeepAndMark{}, "in")
               .node("pass", Pass{}, "keep")
               .node("double", Double{}, "pass")
               .sink<int>("out", "double", n);
  const auto [st, expected] = check_instances(
      g, o, n, [](int v) { return v / 2; }, chain_model);
  CHECK(st.node("pass").signals == static_cast<long long>(expected));
}

}  // namespace

TEST_CASE(
    "User signals: raised among a filter's outputs, forwarded by a node without a handler, "
    "re-raised by a handler, they reach the sink in order with the data (exact per instance)") {
  for (int width : {1, 3, 8, 32})
    for (double scale : {1.0, 4.0})
      for (int instances : {1, 4}) {
        CAPTURE(width);
        CAPTURE(scale);
        CAPTURE(instances);
        check_chain(opts(width, scale, instances, 48));
      }
}

// A host-only build runs its default space on one thread: multi-lane host teams need two.
TEST_CASE(
    "User signals: multi-lane teams (the GPU code path: per-lane staging, team scan, one boss "
    "lane) place them as one-lane teams do" *
    doctest::skip(std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::Serial>)) {
  const int team = std::min(4, static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()));
  REQUIRE_MESSAGE(team >= 2, "multi-lane teams need at least 2 threads in the default space (OMP_NUM_THREADS)");
  for (int width : {1, 8, 32})
    for (double scale : {1.0, 3.0}) {
      CAPTURE(width);
      CAPTURE(scale);
      df::Options o = opts(width, scale, 3, 48);
      o.team_size = team;
      check_chain(o);
    }
}

namespace {
int range_sum(int p) {
  int acc = p;
  for (int i = 0; i < p % 4; ++i) acc += p * 10 + i;
  return acc;
}
// marks every element e with e % 3 == 0, after it
struct MarkElements {
  using input_type = int;
  using outputs = df::Outputs<df::Out<int, 1>>;
  static constexpr int raises = 1;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const int& e, Emit& emit) const {
    emit(e);
    if (e % 3 == 0) emit.raise(AFTER, e);
  }
};
}  // namespace

TEST_CASE(
    "User signals and region boundaries share edges: a signal raised inside a parent's region "
    "passes the aggregate and reaches the sink right before that parent's result") {
  const int n = 600;
  auto g = df::graph("regions")
               .source("in", df::from_view(iota(n)))
               .enumerate("elements", Range{}, "in", 3)
               .node("mark", MarkElements{}, "elements")
               .node("pass", Pass{}, "mark")
               .aggregate("sum", Sum{}, "pass", "elements")
               .sink<int>("out", "sum", n);
  long long expected = 0;
  for (int p = 0; p < n; ++p)
    for (int i = 0; i < p % 4; ++i) expected += (p * 10 + i) % 3 == 0 ? 1 : 0;
  for (int width : {1, 4, 32})
    for (double scale : {1.0, 4.0})
      for (int instances : {1, 3}) {
        CAPTURE(width);
        CAPTURE(scale);
        CAPTURE(instances);
        auto p = df::make_pipeline(g, opts(width, scale, instances, 0));
        p.run();
        const auto out = p.output<int>("out");
        const auto sigs = p.signals("out");
        REQUIRE(sigs.size() == static_cast<std::size_t>(expected));
        std::map<int, std::vector<int>> values;
        for (std::size_t k = 0; k < out.values.size(); ++k) values[out.instance[k]].push_back(out.values[k]);
        bool placed = true;
        for (const auto& s : sigs) {
          const int e = s.signal.payload<int>();
          const auto& v = values[s.instance];
          placed = placed && s.signal.kind == AFTER && s.position < static_cast<long long>(v.size()) &&
                   v[static_cast<std::size_t>(s.position)] == range_sum(e / 10);
        }
        CHECK(placed);
        CHECK(out.values.size() == static_cast<std::size_t>(n));
      }
}

TEST_CASE("User signals: a sink log too small is reported as korch::Error naming the option") {
  const int n = 200;
  auto g = df::graph("small_log")
               .source("in", df::from_view(iota(n)))
               .node("keep", KeepAndMark{}, "in")
               .sink<int>("out", "keep", n);
  auto o = opts(4, 2.0, 1, 0);
  o.signal_log = 3;
  auto p = df::make_pipeline(g, o);
  CHECK_THROWS_WITH_AS(p.run(), doctest::Contains("signal_log"), korch::Error);
  o.signal_log = 0;  // count only
  auto q = df::make_pipeline(g, o);
  q.run();
  CHECK(q.signal_count("out") > 3);
  CHECK(q.signals("out").empty());
}

namespace {
// raises twice for x == 5 but declares one signal per input
struct RaisesTooMany {
  using input_type = int;
  using outputs = df::Outputs<df::Out<int, 1>>;
  static constexpr int raises = 1;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const int& x, Emit& emit) const {
    emit(x);
    if (x == 5) {
      emit.raise(AFTER, x);
      emit.raise(AFTER, x);
    }
  }
};
}  // namespace

TEST_CASE("User signals: raising more per input than F::raises declares is reported as korch::Error") {
  const int n = 50;
  auto g = df::graph("too_many")
               .source("in", df::from_view(iota(n)))
               .node("raise", RaisesTooMany{}, "in")
               .sink<int>("out", "raise", n);
  auto p = df::make_pipeline(g, opts(4, 2.0, 1, 0));
  CHECK_THROWS_WITH_AS(p.run(), doctest::Contains("F::raises"), korch::Error);
}

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
    doctest::skip(std::is_same_v<Kokkos::DefaultExecutionSpace, Kokkos::Serial>)) {
  const int team = std::min(4, static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()));
  REQUIRE_MESSAGE(team >= 2, "multi-lane teams need at least 2 threads in the default space (OMP_NUM_THREADS)");
  const int n = 500;
  auto sources = df::graph("source_signals").source("in", MarkedSource{n}).node("double", Double{}, "in");
  auto sums = df::graph("aggregate_signals")
                  .source("in", df::from_view(iota(n)))
                  .enumerate("elements", MarkedRange{}, "in", 2)
                  .aggregate("sum", SumMarked{}, "elements", "elements")
                  .node("double", Double{}, "sum");
  for (int width : {1, 8, 32}) {
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

}  // namespace test_dataflow_signals
