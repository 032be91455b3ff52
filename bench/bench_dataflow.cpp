// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Dataflow pipelines vs. stage-at-a-time kernels. Prints items/s and lane utilization
// (items consumed / (runs x vector width)) for a filter chain and an expander, and the ratio to a
// baseline that runs each stage as its own Kokkos kernel over the whole array with a compaction
// (scan) between stages - both measured in this run - and the pipeline's instances in global
// memory against team scratch (docs/dataflow.md, "Instance memory"). Never asserts on time.
//
//   korch-bench-dataflow [items (default 4194304)] [vector width (default 64)] [repeats (5)]
//                        [--team-size N] [--queue-scale X] [--instances N] [--chunk N]  (--help)
#include "bench_command_lines.hpp"
#include <korch/dataflow.hpp>
#include <korch/error.hpp>
#include "record_nodes.hpp"
#include <korch/cli/program.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

namespace df = korch::dataflow;
using Exec = Kokkos::DefaultExecutionSpace;

namespace {

using korch::dataflow::demo::mix;

// A filter stage: keeps x with probability percent/100 and transforms it.
struct Stage {
  int stage;
  int percent;
  KOKKOS_INLINE_FUNCTION bool keep(std::uint32_t x) const {
    return mix(x * 2654435761u + static_cast<std::uint32_t>(stage)) % 100u < static_cast<std::uint32_t>(percent);
  }
  KOKKOS_INLINE_FUNCTION std::uint32_t apply(std::uint32_t x) const { return mix(x + 17u * stage); }
};
struct FilterNode {
  using input_type = std::uint32_t;
  using outputs = df::Outputs<df::Out<std::uint32_t, 1>>;
  Stage s;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const std::uint32_t& x, Emit& emit) const {
    if (s.keep(x)) emit(s.apply(x));
  }
};
// The expander: x -> mix(x) % 17 items (0..16).
KOKKOS_INLINE_FUNCTION int expand_count(std::uint32_t x) { return static_cast<int>(mix(x ^ 0x9e3779b9u) % 17u); }
KOKKOS_INLINE_FUNCTION std::uint32_t expand_item(std::uint32_t x, int j) { return mix(x + 101u * j); }
struct ExpandNode {
  using input_type = std::uint32_t;
  using outputs = df::Outputs<df::Out<std::uint32_t, 16>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const std::uint32_t& x, Emit& emit) const {
    const int k = expand_count(x);
    for (int j = 0; j < k; ++j) emit(expand_item(x, j));
  }
};

using U32View = Kokkos::View<std::uint32_t*, Exec::memory_space>;

// Baseline: one filter stage = a kernel computing flag and value, then a scan that compacts.
long long baseline_filter(const Stage& s, const U32View& in, long long n, U32View& out, const U32View& tmp,
                          const Kokkos::View<int*, Exec::memory_space>& flag) {
  Kokkos::parallel_for(
      "baseline::stage", Kokkos::RangePolicy<Exec>(0, n), KOKKOS_LAMBDA(long i) {
        const std::uint32_t x = in(i);
        flag(i) = s.keep(x) ? 1 : 0;
        tmp(i) = s.apply(x);
      });
  long long total = 0;
  Kokkos::parallel_scan(
      "baseline::compact", Kokkos::RangePolicy<Exec>(0, n),
      KOKKOS_LAMBDA(long i, long long& off, const bool final) {
        if (final && flag(i)) out(off) = tmp(i);
        off += flag(i);
      },
      total);
  return total;
}

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

using Args = korch::bench::DataflowBenchArgs;
using FlagView = Kokkos::View<int*, Exec::memory_space>;

// A graph's pipeline with its instances in global memory and in team scratch (when one instance
// fits there), and on GPU spaces the automatic choice with its registers capped, run alternately in
// the same process: the best seconds of each, and what InstanceMemory::automatic chooses, with that
// choice's statistics and output size.
struct MemoryTimes {
  double global = 1e30;
  double scratch = -1;  // -1: one instance does not fit the space's team scratch
  double capped = -1;   // the automatic choice with Options::cap_registers; -1: not timed (host spaces)
  bool automatic_scratch = false;
  long long bytes = 0;  // one instance's state
  int instances = 0;
  int team_size = 0;
  df::RunStats st;
  std::size_t out_items = 0;
  std::size_t capped_items = 0;
  double automatic() const { return automatic_scratch ? scratch : global; }
  const char* automatic_name() const { return automatic_scratch ? "team scratch" : "global memory"; }
};

template <class Graph>
MemoryTimes time_pipelines(const Graph& g, df::Options opt, int repeats) {
  MemoryTimes t;
  opt.instance_memory = df::InstanceMemory::global;
  auto global = df::make_pipeline<Exec>(g, opt);
  std::optional<decltype(global)> scratch;
  opt.instance_memory = df::InstanceMemory::team_scratch;
  try {
    scratch.emplace(g, opt);
  } catch (const korch::Error&) {
  }
  opt.instance_memory = df::InstanceMemory::automatic;
  t.automatic_scratch = df::make_pipeline<Exec>(g, opt).team_scratch();
  t.bytes = global.instance_bytes();
  t.instances = global.instances();
  t.team_size = global.team_size();
  // The register cap matters only where a launch has launch bounds: on GPU spaces.
  std::optional<decltype(global)> capped;
  opt.cap_registers = true;
  if (!Kokkos::SpaceAccessibility<Kokkos::HostSpace, Exec::memory_space>::accessible) capped.emplace(g, opt);
  for (int r = 0; r < repeats; ++r) {
    if (capped) t.capped = std::min(t.capped < 0 ? 1e30 : t.capped, capped->run().seconds);
    const df::RunStats in_global = global.run();
    t.global = std::min(t.global, in_global.seconds);
    if (!t.automatic_scratch) t.st = in_global;
    if (!scratch) continue;
    const df::RunStats in_scratch = scratch->run();
    t.scratch = t.scratch < 0 ? in_scratch.seconds : std::min(t.scratch, in_scratch.seconds);
    if (t.automatic_scratch) t.st = in_scratch;
  }
  t.out_items = (t.automatic_scratch ? *scratch : global).template output<std::uint32_t>("out").values.size();
  if (capped) t.capped_items = capped->template output<std::uint32_t>("out").values.size();
  return t;
}

// The pipeline's lines: the automatic choice against the baseline, then the two memories.
void print_pipeline(const MemoryTimes& t, long long n, double base_best) {
  std::printf("  dataflow pipeline (%d instances of %d lanes, %s): %8.3f ms  %8.2f Mitems/s\n", t.instances,
              t.team_size, t.automatic_name(), t.automatic() * 1e3, n / t.automatic() / 1e6);
  std::printf("  throughput ratio pipeline/baseline: %.2f\n", base_best / t.automatic());
  if (t.scratch < 0)
    std::printf("  instance memory (%lld bytes per instance): global %.3f ms; team scratch: does not fit\n", t.bytes,
                t.global * 1e3);
  else
    std::printf("  instance memory (%lld bytes per instance): global %.3f ms, team scratch %.3f ms, ratio %.2f\n",
                t.bytes, t.global * 1e3, t.scratch * 1e3, t.global / t.scratch);
  if (t.capped > 0)
    std::printf(
        "  at most 64 registers per lane (Options::cap_registers): %.3f ms, ratio to uncapped %.2f (%zu items)\n",
        t.capped * 1e3, t.automatic() / t.capped, t.capped_items);
}

// The input items: mix(i) for i < n.
U32View make_input(long long n) {
  U32View input("input", n);
  Kokkos::parallel_for(
      "init", Kokkos::RangePolicy<Exec>(0, n),
      KOKKOS_LAMBDA(long i) { input(i) = mix(static_cast<std::uint32_t>(i)); });
  Kokkos::fence();
  return input;
}

// ---- filter chain ------------------------------------------------------------------
// Baseline: the four stages one after another over the whole array; best seconds of `repeats`,
// and in `out_items` the items left.
double time_baseline_chain(const U32View& input, long long n, const Stage (&stages)[4], int repeats,
                           long long& out_items) {
  U32View a("a", n), b("b", n), tmp("tmp", n);
  FlagView flag("flag", n);
  double base_best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const double t0 = now();
    long long m = n;
    U32View cur = input;
    U32View dst[2] = {a, b};
    for (int s = 0; s < 4; ++s) {
      m = baseline_filter(stages[s], cur, m, dst[s % 2], tmp, flag);
      cur = dst[s % 2];
    }
    Kokkos::fence();
    base_best = std::min(base_best, now() - t0);
    out_items = m;
  }
  return base_best;
}

void bench_filter_chain(const U32View& input, long long n, const Stage (&stages)[4], const df::Options& opt,
                        int repeats) {
  long long base_out = 0;
  const double base_best = time_baseline_chain(input, n, stages, repeats, base_out);
  auto g = df::graph("filter-chain")
               .source("in", df::from_view(input))
               .node("f1", FilterNode{stages[0]}, "in")
               .node("f2", FilterNode{stages[1]}, "f1")
               .node("f3", FilterNode{stages[2]}, "f2")
               .node("f4", FilterNode{stages[3]}, "f3")
               .sink<std::uint32_t>("out", "f4", static_cast<std::size_t>(n));
  const MemoryTimes t = time_pipelines(g, opt, repeats);
  const df::RunStats& st = t.st;
  std::printf(
      "\nfilter chain (4 stages, selectivities 0.9 0.7 0.5 0.8): %lld -> %lld items "
      "(pipeline %zu)\n",
      n, base_out, t.out_items);
  std::printf("  baseline (kernel + scan compaction per stage): %8.3f ms  %8.2f Mitems/s\n", base_best * 1e3,
              n / base_best / 1e6);
  print_pipeline(t, n, base_best);
  std::printf("  lane utilization: filters %.3f (", st.utilization(df::NodeKind::Map));
  for (const char* name : {"f1", "f2", "f3", "f4"}) std::printf(" %s %.3f", name, st.node(name).utilization);
  std::printf(" ), sink %.3f\n", st.node("out").utilization);
}

// ---- expander ------------------------------------------------------------------------
long long count_expanded(const U32View& ein, long long ne) {
  long long expanded = 0;
  Kokkos::parallel_reduce(
      "count", Kokkos::RangePolicy<Exec>(0, ne), KOKKOS_LAMBDA(long i, long long& s) { s += expand_count(ein(i)); },
      expanded);
  return expanded;
}

// Baseline: a scan for the offsets, the expand kernel, then the filter stage with its compaction;
// best seconds of `repeats`, and in `out_items` the items left.
double time_baseline_expander(const U32View& ein, long long ne, long long expanded, const Stage& filter, int repeats,
                              long long& out_items) {
  Kokkos::View<long long*, Exec::memory_space> offs("offs", ne + 1);
  U32View e1("e1", expanded), e2("e2", expanded), etmp("etmp", expanded);
  FlagView eflag("eflag", expanded);
  double base_best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const double t0 = now();
    Kokkos::parallel_scan(
        "baseline::expand-offsets", Kokkos::RangePolicy<Exec>(0, ne),
        KOKKOS_LAMBDA(long i, long long& off, const bool final) {
          const int k = expand_count(ein(i));
          if (final) offs(i) = off;
          off += k;
        });
    Kokkos::parallel_for(
        "baseline::expand", Kokkos::RangePolicy<Exec>(0, ne), KOKKOS_LAMBDA(long i) {
          const std::uint32_t x = ein(i);
          const int k = expand_count(x);
          for (int j = 0; j < k; ++j) e1(offs(i) + j) = expand_item(x, j);
        });
    out_items = baseline_filter(filter, e1, expanded, e2, etmp, eflag);
    Kokkos::fence();
    base_best = std::min(base_best, now() - t0);
  }
  return base_best;
}

void bench_expander(const U32View& input, long long n, const Stage& filter, const df::Options& opt, int repeats) {
  const long long ne = n / 8;
  const U32View ein(Kokkos::subview(input, std::make_pair(0LL, ne)));
  const long long expanded = count_expanded(ein, ne);
  long long base_out = 0;
  const double base_best = time_baseline_expander(ein, ne, expanded, filter, repeats, base_out);
  auto ge = df::graph("expander")
                .source("in", df::from_view(ein))
                .node("expand", ExpandNode{}, "in")
                .node("filter", FilterNode{filter}, "expand")
                .sink<std::uint32_t>("out", "filter", static_cast<std::size_t>(expanded));
  const MemoryTimes t = time_pipelines(ge, opt, repeats);
  const df::RunStats& st = t.st;
  std::printf(
      "\nexpander (0..16 per item, then a 0.5 filter): %lld -> %lld -> %lld items "
      "(pipeline %zu)\n",
      ne, expanded, base_out, t.out_items);
  std::printf("  baseline (count scan + expand kernel + compaction): %8.3f ms  %8.2f Mitems/s\n", base_best * 1e3,
              ne / base_best / 1e6);
  print_pipeline(t, ne, base_best);
  std::printf("  lane utilization: expand %.3f, filter %.3f, both %.3f, sink %.3f\n", st.node("expand").utilization,
              st.node("filter").utilization, st.utilization(df::NodeKind::Map), st.node("out").utilization);
}

int run(const Args& args) {
  const long long n = args.items;
  std::printf(
      "korch dataflow benchmark: %s, concurrency %d, %lld items, vector width %d, queue scale %g, best "
      "of %d\n",
      Exec::name(), static_cast<int>(Exec().concurrency()), n, args.width, args.queue_scale, args.repeats);
  if (args.chunk > 0) std::printf("  instances claim %d input items at a time\n", args.chunk);
  const U32View input = make_input(n);
  const Stage stages[4] = {{1, 90}, {2, 70}, {3, 50}, {4, 80}};
  df::Options opt;
  opt.vector_width = args.width;
  opt.team_size = args.team_size;
  opt.queue_scale = args.queue_scale;
  opt.instances = args.instances;
  opt.chunk = args.chunk;
  bench_filter_chain(input, n, stages, opt, args.repeats);
  bench_expander(input, n, stages[2], opt, args.repeats);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  const auto command_line = korch::bench::dataflow_bench_command_line(args);
  korch::cli::Program& program = *command_line;
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(args);
  });
}
