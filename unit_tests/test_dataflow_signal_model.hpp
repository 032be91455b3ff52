// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the suites of user signals (test_dataflow_signals.cpp, test_dataflow_signal_hooks.cpp):
// signal kinds and payloads, a handler node, and the check of every instance's items and signals
// against a sequential model of the graph.
#pragma once

#include <korch/dataflow.hpp>

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

namespace test_dataflow_signal_model {

namespace df = korch::dataflow;

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

// What test_dataflow_graphs::Sum makes of parent p of test_dataflow_graphs::Range.
inline int range_sum(int p) {
  int acc = p;
  for (int i = 0; i < p % 4; ++i) acc += p * 10 + i;
  return acc;
}

inline Kokkos::View<int*> iota(int n) {
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

// What one instance delivered: its items and logged signals merged by position.
inline std::vector<Event> delivered(const std::vector<int>& values, const std::vector<df::SignalRecord>& sigs) {
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

inline df::Options opts(int width, double scale, int instances, int chunk) {
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

}  // namespace test_dataflow_signal_model
