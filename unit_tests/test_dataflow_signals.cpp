// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// User signals in dataflow pipelines: a filter raises signals among its outputs, a pass-through
// node forwards them, a handler re-raises them with what it saw, and the sink logs them; the
// order of signals and items is checked per instance against a sequential model on the host, for
// several vector widths, queue scales and instance counts, and together with region boundaries.
// Signals that sources, enumerates and aggregates raise: test_dataflow_signal_hooks.cpp.
#include <doctest/doctest.h>

#include <korch/dataflow.hpp>
#include <korch/error.hpp>

#include "test_dataflow_graphs.hpp"
#include "test_dataflow_signal_model.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_dataflow_signals {

using namespace test_dataflow_signal_model;  // NOLINT: the suites' shared vocabulary
using test_dataflow_graphs::Pass;            // no handler: forwards every signal
using test_dataflow_graphs::Range;
using test_dataflow_graphs::Sum;

namespace {

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
    "User signals: multi-lane teams (the GPU code path: per-lane staging or outputs from registers, "
    "team scan, one boss lane) place them as one-lane teams do" *
    doctest::skip(std::string_view(Kokkos::DefaultExecutionSpace::name()) == "Serial")) {
  const int team = std::min(4, static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()));
  REQUIRE_MESSAGE(team >= 2, "multi-lane teams need at least 2 threads in the default space (OMP_NUM_THREADS)");
  for (int width : {1, 2, 8, 32})
    for (double scale : {1.0, 3.0}) {
      CAPTURE(width);
      CAPTURE(scale);
      df::Options o = opts(width, scale, 3, 48);
      o.team_size = team;
      check_chain(o);
    }
}

namespace {
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

}  // namespace test_dataflow_signals
