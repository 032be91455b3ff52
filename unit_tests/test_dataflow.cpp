// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Dataflow pipelines: outputs against a sequential reference, the protocol's
// invariants (debug checks), region numbering, enumeration with parent buffers.
#include <doctest/doctest.h>

#include <korch/dataflow.hpp>
#include "record_nodes.hpp"
#include "test_error_support.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace df = korch::dataflow;

namespace {

using korch::dataflow::demo::mix;

struct Item {
  int idx;  // input position
  int value;
  int sub;  // expander: output number within its input
};

// keeps an item with probability percent/100 (decided by a hash of its value and the stage)
struct Keep {
  using input_type = Item;
  using outputs = df::Outputs<df::Out<Item, 1>>;
  int stage;
  int percent;
  KOKKOS_INLINE_FUNCTION bool keep(const Item& x) const {
    return static_cast<int>(mix(static_cast<std::uint32_t>(x.value) * 31u + stage) % 100u) < percent;
  }
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const Item& x, Emit& emit) const {
    if (keep(x)) emit(Item{x.idx, x.value + 1, x.sub});
  }
};

// emits mix(value) % (max+1) items
struct Expand {
  using input_type = Item;
  using outputs = df::Outputs<df::Out<Item, 16>>;
  int max;
  KOKKOS_INLINE_FUNCTION int count(const Item& x) const {
    return static_cast<int>(mix(static_cast<std::uint32_t>(x.value) + 7u) % (max + 1));
  }
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const Item& x, Emit& emit) const {
    const int k = count(x);
    for (int j = 0; j < k; ++j) emit(Item{x.idx, x.value * 3 + j, j});
  }
};

// two channels: accept (value even) and reject
struct Route {
  using input_type = Item;
  using outputs = df::Outputs<df::Out<Item, 1>, df::Out<int, 1>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const Item& x, Emit& emit) const {
    if (x.value % 2 == 0)
      emit.template to<0>(x);
    else
      emit(df::channel<1>, x.idx);
  }
};

// declares at most 1 output but emits 2 for some inputs (debug check)
struct Liar {
  using input_type = Item;
  using outputs = df::Outputs<df::Out<Item, 1>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const Item& x, Emit& emit) const {
    emit(x);
    if (x.idx == 5) emit(x);
  }
};

using ItemView = Kokkos::View<Item*>;

std::vector<Item> random_items(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Item> v(n);
  for (int i = 0; i < n; ++i) v[i] = Item{i, static_cast<int>(rng() % 100000), 0};
  return v;
}

ItemView to_view(const std::vector<Item>& v) {
  ItemView d(Kokkos::view_alloc("items", Kokkos::WithoutInitializing), v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = v[i];
  Kokkos::deep_copy(d, h);
  return d;
}

bool same(const Item& a, const Item& b) { return a.idx == b.idx && a.value == b.value && a.sub == b.sub; }
bool less(const Item& a, const Item& b) { return std::tie(a.idx, a.sub, a.value) < std::tie(b.idx, b.sub, b.value); }

// Outputs equal the reference as a multiset, and within each instance they come in input order.
void check_items(const df::SinkOutput<Item>& out, std::vector<Item> ref) {
  REQUIRE(out.values.size() == ref.size());
  std::map<int, Item> last;
  bool ordered = true;
  for (std::size_t k = 0; k < out.values.size(); ++k) {
    auto it = last.find(out.instance[k]);
    if (it != last.end() && !less(it->second, out.values[k])) ordered = false;
    last[out.instance[k]] = out.values[k];
  }
  CHECK(ordered);
  std::vector<Item> got = out.values;
  std::sort(got.begin(), got.end(), less);
  std::sort(ref.begin(), ref.end(), less);
  bool equal = true;
  for (std::size_t k = 0; k < ref.size(); ++k) equal = equal && same(got[k], ref[k]);
  CHECK(equal);
}

df::Options opts(int width, double scale, int instances) {
  df::Options o;
  o.vector_width = width;
  o.queue_scale = scale;
  o.instances = instances;
  return o;
}

}  // namespace

TEST_CASE(
    "Dataflow: a filter chain matches the sequential reference (multiset; in order per "
    "instance) for widths 1..128, queue scales down to the minimum, 1..many instances") {
  const int n = 3000;
  const auto input = random_items(n, 11);
  const auto d = to_view(input);
  const Keep k1{1, 70}, k2{2, 50}, k3{3, 90};
  std::vector<Item> ref;
  for (Item x : input) {
    if (!k1.keep(x)) continue;
    x.value++;
    if (!k2.keep(x)) continue;
    x.value++;
    if (!k3.keep(x)) continue;
    x.value++;
    ref.push_back(x);
  }
  auto g = df::graph("filters")
               .source("in", df::from_view(d))
               .node("k1", k1, "in")
               .node("k2", k2, "k1")
               .node("k3", k3, "k2")
               .sink<Item>("out", "k3", n);
  for (int width : {1, 2, 7, 32, 128})
    for (double scale : {1.0, 1.5, 4.0})
      for (int instances : {1, 3, 16}) {
        CAPTURE(width);
        CAPTURE(scale);
        CAPTURE(instances);
        auto p = df::make_pipeline(g, opts(width, scale, instances));
        const auto st = p.run();
        check_items(p.output<Item>("out"), ref);
        CHECK(st.node("in").lanes == n);
        CHECK(st.node("k1").lanes == n);
      }
}

TEST_CASE("Dataflow: an expander emitting 0..16 per item matches the reference") {
  const int n = 2000;
  const auto input = random_items(n, 5);
  const auto d = to_view(input);
  const Expand e{16};
  const Keep k{4, 60};
  std::vector<Item> ref;
  for (const Item& x : input)
    for (int j = 0; j < e.count(x); ++j) {
      Item y{x.idx, x.value * 3 + j, j};
      if (k.keep(y)) ref.push_back(Item{y.idx, y.value + 1, y.sub});
    }
  auto g = df::graph("expander")
               .source("in", df::from_view(d))
               .node("expand", e, "in")
               .node("keep", k, "expand")
               .sink<Item>("out", "keep", ref.size());
  for (int width : {1, 3, 16, 64, 128})
    for (double scale : {1.0, 4.0})
      for (int instances : {1, 4, 9}) {
        CAPTURE(width);
        CAPTURE(scale);
        CAPTURE(instances);
        auto p = df::make_pipeline(g, opts(width, scale, instances));
        p.run();
        check_items(p.output<Item>("out"), ref);
      }
}

TEST_CASE("Dataflow: two-channel accept/reject routing sends every item to exactly one sink") {
  const int n = 1500;
  const auto input = random_items(n, 3);
  const auto d = to_view(input);
  std::vector<Item> acc;
  std::vector<int> rej;
  for (const Item& x : input) (x.value % 2 == 0 ? (void)acc.push_back(x) : rej.push_back(x.idx));
  auto g = df::graph("route")
               .source("in", df::from_view(d))
               .node("route", Route{}, "in", {"accept", "reject"})
               .sink<Item>("yes", "route.accept", n)
               .sink<int>("no", "route.reject", n);
  for (int width : {1, 8, 128})
    for (int instances : {1, 5}) {
      auto p = df::make_pipeline(g, opts(width, 2.0, instances));
      p.run();
      check_items(p.output<Item>("yes"), acc);
      auto no = p.output<int>("no");
      std::vector<int> got = no.values;
      std::sort(got.begin(), got.end());
      CHECK(got == rej);
    }
}

TEST_CASE("Dataflow: a generator source feeds the pipeline like an array") {
  auto gen = df::generate<Item>(
      1000, KOKKOS_LAMBDA(long i) {
        return Item{static_cast<int>(i), static_cast<int>(i * 7), 0};
      });
  auto g = df::graph("gen").source("in", gen).node("k", Keep{9, 50}, "in").sink<Item>("out", "k", 1000);
  std::vector<Item> ref;
  for (int i = 0; i < 1000; ++i) {
    Item x{i, i * 7, 0};
    if (Keep{9, 50}.keep(x)) ref.push_back(Item{i, i * 7 + 1, 0});
  }
  auto p = df::make_pipeline(g, opts(16, 4.0, 3));
  p.run();
  check_items(p.output<Item>("out"), ref);
}

TEST_CASE(
    "Dataflow: a GPU team is the run width rounded up to a power of two; another team size "
    "there is a korch::Error naming it") {
  constexpr bool host =
      Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;
  const auto input = random_items(300, 3);
  const auto d = to_view(input);
  auto g =
      df::graph("team-shape").source("in", df::from_view(d)).node("k", Keep{5, 50}, "in").sink<Item>("out", "k", 300);
  std::vector<Item> ref;
  for (const Item& x : input)
    if (Keep{5, 50}.keep(x)) ref.push_back(Item{x.idx, x.value + 1, x.sub});
  for (int width : {1, 7, 64, 100}) {
    CAPTURE(width);
    auto p = df::make_pipeline(g, opts(width, 1.0, 2));
    int expected = 1;
    while (!host && expected < width) expected *= 2;
    CHECK(p.team_size() == expected);
    p.run();
    check_items(p.output<Item>("out"), ref);
  }
  if (!host) {  // host teams are sized by the host's threads (see "multi-lane teams" below)
    df::Options o = opts(8, 1.0, 2);
    o.team_size = 6;
    const std::string message = korch::test::error_of([&] { df::make_pipeline(g, o); });
    CHECK(korch::test::contains(message, "team size 6"));
    CHECK(korch::test::contains(message, "use 8"));
  }
}

// A host-only build runs its default space on one thread: multi-lane host teams need two.
TEST_CASE(
    "Dataflow: multi-lane teams (the GPU code path: per-lane staging or outputs from registers, team "
    "scan, one boss lane, barriers) give the same results as one-lane teams" *
    doctest::skip(std::string_view(Kokkos::DefaultExecutionSpace::name()) == "Serial")) {
  const int team = std::min(4, static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()));
  REQUIRE_MESSAGE(team >= 2, "multi-lane teams need at least 2 threads in the default space (OMP_NUM_THREADS)");
  const int n = 600;  // small: team barriers spin, and the test machine is shared
  const auto input = random_items(n, 17);
  const auto d = to_view(input);
  const Expand e{16};
  const Keep k{6, 40};
  std::vector<Item> ref;
  for (const Item& x : input)
    for (int j = 0; j < e.count(x); ++j) {
      Item y{x.idx, x.value * 3 + j, j};
      if (k.keep(y)) ref.push_back(Item{y.idx, y.value + 1, y.sub});
    }
  auto g = df::graph("teams")
               .source("in", df::from_view(d))
               .node("expand", e, "in")
               .node("keep", k, "expand")
               .sink<Item>("out", "keep", ref.size());
  std::vector<Item> acc;
  std::vector<int> rej;
  for (const Item& x : input) (x.value % 2 == 0 ? (void)acc.push_back(x) : rej.push_back(x.idx));
  auto r = df::graph("teams-route")
               .source("in", df::from_view(d))
               .node("route", Route{}, "in", {"accept", "reject"})
               .sink<Item>("yes", "route.accept", n)
               .sink<int>("no", "route.reject", n);
  for (int width : {1, 2, 8, 64})  // up to the team (2 or more lanes): outputs placed from registers
    for (double scale : {1.0, 3.0}) {
      CAPTURE(width);
      CAPTURE(scale);
      df::Options o = opts(width, scale, 3);
      o.team_size = team;
      auto p = df::make_pipeline(g, o);
      CHECK(p.team_size() == team);
      p.run();
      check_items(p.output<Item>("out"), ref);
      auto q = df::make_pipeline(r, o);
      q.run();
      check_items(q.output<Item>("yes"), acc);
      CHECK(q.output<int>("no").values.size() == rej.size());
    }
}

namespace {
// declares at most 2 outputs but emits 3 for some inputs (debug check on the direct-emitter path)
struct Liar2 {
  using input_type = Item;
  using outputs = df::Outputs<df::Out<Item, 2>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const Item& x, Emit& emit) const {
    emit(x);
    emit(x);
    if (x.idx == 5) emit(x);
  }
};
// a channel with one output per input and one with up to 3 (the one-lane direct-emitter path
// writing two queues contiguously)
struct Split {
  using input_type = Item;
  using outputs = df::Outputs<df::Out<Item, 1>, df::Out<int, 3>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const Item& x, Emit& emit) const {
    if (x.value % 3 != 0) emit.template to<0>(x);
    for (int j = 0; j < x.value % 4; ++j) emit(df::channel<1>, x.idx * 4 + j);
  }
};
}  // namespace

TEST_CASE("Dataflow: emitting more than the declared maximum is reported on every emitter path") {
  const auto input = random_items(300, 23);
  const auto d = to_view(input);
  auto g1 = df::graph("liar").source("in", df::from_view(d)).node("l", Liar{}, "in").sink<Item>("out", "l", 1000);
  auto g2 = df::graph("liar2").source("in", df::from_view(d)).node("l", Liar2{}, "in").sink<Item>("out", "l", 1000);
  // one lane per team, and two where the space has the threads (outputs in registers, scanned)
  const int lanes = std::min(2, static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()));
  for (int team : {1, lanes})
    for (int width : {1, 16, 64}) {
      CAPTURE(team);
      CAPTURE(width);
      df::Options o = opts(width, 1.0, 2);
      o.team_size = team;
      auto p1 = df::make_pipeline(g1, o);
      CHECK_THROWS_WITH_AS(p1.run(), doctest::Contains("'l'"), korch::Error);
      auto p2 = df::make_pipeline(g2, o);
      CHECK_THROWS_AS(p2.run(), korch::Error);
    }
}

TEST_CASE(
    "Dataflow: a node with a single-output and a multi-output channel feeds both queues "
    "across ring wraps (widths 1..128, minimum queue scale)") {
  const int n = 2500;
  const auto input = random_items(n, 29);
  const auto d = to_view(input);
  std::vector<Item> a;
  std::vector<int> b;
  for (const Item& x : input) {
    if (x.value % 3 != 0) a.push_back(x);
    for (int j = 0; j < x.value % 4; ++j) b.push_back(x.idx * 4 + j);
  }
  std::sort(b.begin(), b.end());
  auto g = df::graph("split")
               .source("in", df::from_view(d))
               .node("split", Split{}, "in", {"a", "b"})
               .sink<Item>("a", "split.a", n)
               .sink<int>("b", "split.b", 3 * n);
  for (int width : {1, 5, 64, 128})
    for (double scale : {1.0, 2.5})
      for (int instances : {1, 4}) {
        CAPTURE(width);
        CAPTURE(scale);
        CAPTURE(instances);
        auto p = df::make_pipeline(g, opts(width, scale, instances));
        p.run();
        check_items(p.output<Item>("a"), a);
        const auto out_b = p.output<int>("b");
        std::vector<int> got = out_b.values;
        std::sort(got.begin(), got.end());
        CHECK(got == b);
        // in order within an instance
        std::map<int, int> last;
        bool ordered = true;
        for (std::size_t k = 0; k < out_b.values.size(); ++k) {
          auto it = last.find(out_b.instance[k]);
          if (it != last.end() && it->second >= out_b.values[k]) ordered = false;
          last[out_b.instance[k]] = out_b.values[k];
        }
        CHECK(ordered);
      }
}
