// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-dataflow: demos of dataflow pipelines. Each subcommand builds a graph, runs it
// on the default execution space, compares the output with a sequential reference and prints
// results and lane utilization.
//
//   korch-dataflow [filters|expander|route|parser|nested|all]... [--n N] [--width W]
//                  [--instances I] [--scale S] [--buffer B]                (korch-dataflow --help)
// Several subcommands run in the order given; none means all. Exit status 0 when every output
// matches its reference, 1 on a mismatch or failure, 2 on a usage error.
#include <korch/dataflow.hpp>
#include "dataflow_command_line.hpp"
#include "record_nodes.hpp"
#include <korch/error.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace df = korch::dataflow;

namespace {

using korch::dataflow::demo::mix;

using Args = korch::dataflow::demo::DataflowArgs;

// ---- filter chain, expander, routing -----------------------------------------------------------
struct Filter {
  using input_type = std::uint32_t;
  using outputs = df::Outputs<df::Out<std::uint32_t, 1>>;
  std::uint32_t stage, percent;
  KOKKOS_INLINE_FUNCTION bool keep(std::uint32_t x) const { return mix(x + stage) % 100u < percent; }
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const std::uint32_t& x, Emit& emit) const {
    if (keep(x)) emit(x ^ stage);
  }
};
struct Expander {
  using input_type = std::uint32_t;
  using outputs = df::Outputs<df::Out<std::uint32_t, 16>>;
  KOKKOS_INLINE_FUNCTION static int count(std::uint32_t x) { return static_cast<int>(mix(x) % 17u); }
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const std::uint32_t& x, Emit& emit) const {
    for (int j = 0; j < count(x); ++j) emit(x * 17u + static_cast<std::uint32_t>(j));
  }
};
struct Router {  // accept multiples of 3, reject the rest (as their remainder)
  using input_type = std::uint32_t;
  using outputs = df::Outputs<df::Out<std::uint32_t, 1>, df::Out<int, 1>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const std::uint32_t& x, Emit& emit) const {
    if (x % 3 == 0)
      emit(df::channel<0>, x);
    else
      emit(df::channel<1>, static_cast<int>(x % 3));
  }
};

Kokkos::View<std::uint32_t*> random_input(int n, std::vector<std::uint32_t>& host) {
  std::mt19937 rng(42);
  host.resize(n);
  Kokkos::View<std::uint32_t*> d("input", n);
  auto h = Kokkos::create_mirror_view(d);
  for (int i = 0; i < n; ++i) h(i) = host[i] = rng();
  Kokkos::deep_copy(d, h);
  return d;
}

void print_stats(const df::RunStats& st) {
  std::printf("  %d instances (state in %s%s), vector width %d, %.3f ms\n", st.instances,
              st.team_scratch ? "team scratch" : "global memory",
              st.registers_capped ? ", at most 64 registers per lane" : "", st.vector_width, st.seconds * 1e3);
  std::printf("  %-12s %-15s %10s %10s %12s %8s %8s %8s %6s\n", "node", "kind", "firings", "runs", "items", "signals",
              "flushes", "blocks", "util");
  for (const auto& n : st.nodes)
    std::printf("  %-12s %-15s %10lld %10lld %12lld %8lld %8lld %8lld %6.3f\n", n.name.c_str(), df::to_string(n.kind),
                n.firings, n.runs, n.lanes, n.signals, n.flushes, n.blocks, n.utilization);
}

template <class T>
bool same_multiset(std::vector<T> a, std::vector<T> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

bool filters(const Args& a) {
  std::vector<std::uint32_t> host;
  auto d = random_input(a.n, host);
  const Filter f[3] = {{1, 80}, {2, 50}, {3, 90}};
  std::vector<std::uint32_t> ref;
  for (std::uint32_t x : host) {
    bool ok = true;
    for (const Filter& s : f) {
      if (!ok || !s.keep(x)) {
        ok = false;
        break;
      }
      x ^= s.stage;
    }
    if (ok) ref.push_back(x);
  }
  auto g = df::graph("filter-chain")
               .source("in", df::from_view(d))
               .node("f1", f[0], "in")
               .node("f2", f[1], "f1")
               .node("f3", f[2], "f2")
               .sink<std::uint32_t>("out", "f3", a.n);
  auto p = df::make_pipeline(g, a.opt);
  const auto st = p.run();
  const auto out = p.output<std::uint32_t>("out");
  const bool ok = same_multiset(out.values, ref);
  std::printf("filter chain (keep 80%% -> 50%% -> 90%%): %d items -> %zu (reference %zu): %s\n", a.n, out.values.size(),
              ref.size(), ok ? "matches" : "MISMATCH");
  print_stats(st);
  return ok;
}

bool expander(const Args& a) {
  std::vector<std::uint32_t> host;
  auto d = random_input(a.n, host);
  std::vector<std::uint32_t> ref;
  for (std::uint32_t x : host)
    for (int j = 0; j < Expander::count(x); ++j) ref.push_back(x * 17u + static_cast<std::uint32_t>(j));
  auto g = df::graph("expander")
               .source("in", df::from_view(d))
               .node("expand", Expander{}, "in")
               .sink<std::uint32_t>("out", "expand", ref.size());
  auto p = df::make_pipeline(g, a.opt);
  const auto st = p.run();
  const auto out = p.output<std::uint32_t>("out");
  const bool ok = same_multiset(out.values, ref);
  std::printf("expander (0..16 outputs per item): %d items -> %zu (reference %zu): %s\n", a.n, out.values.size(),
              ref.size(), ok ? "matches" : "MISMATCH");
  print_stats(st);
  return ok;
}

bool route(const Args& a) {
  std::vector<std::uint32_t> host;
  auto d = random_input(a.n, host);
  std::vector<std::uint32_t> yes;
  std::vector<int> no;
  for (std::uint32_t x : host) (x % 3 == 0 ? (void)yes.push_back(x) : no.push_back(static_cast<int>(x % 3)));
  auto g = df::graph("route")
               .source("in", df::from_view(d))
               .node("route", Router{}, "in", {"accept", "reject"})
               .sink<std::uint32_t>("accepted", "route.accept", a.n)
               .sink<int>("rejected", "route.reject", a.n);
  auto p = df::make_pipeline(g, a.opt);
  const auto st = p.run();
  const auto acc = p.output<std::uint32_t>("accepted");
  const auto rej = p.output<int>("rejected");
  const bool ok = same_multiset(acc.values, yes) && same_multiset(rej.values, no);
  std::printf("accept/reject routing: %d items -> %zu accepted, %zu rejected: %s\n", a.n, acc.values.size(),
              rej.values.size(), ok ? "matches" : "MISMATCH");
  print_stats(st);
  return ok;
}

// ---- record parser ----------------------------------------------------------------------------
using korch::dataflow::demo::Char;
using korch::dataflow::demo::Field;
using korch::dataflow::demo::Record;
struct FieldValue {  // a field parsed as a number (digits only)
  int rec, field, digits;
  long long value;
};
struct RecordSummary {
  int id, fields, numeric;
  long long total;
};

using korch::dataflow::demo::Chars;
using korch::dataflow::demo::Fields;
using korch::dataflow::demo::NonEmpty;
struct ParseField {  // closes the chars region: digits of one field -> its value
  using input_type = Char;
  using parent_type = Field;
  using accumulator_type = FieldValue;
  using output_type = FieldValue;
  KOKKOS_INLINE_FUNCTION FieldValue init(const Field& f) const { return FieldValue{f.rec, f.idx, 0, 0}; }
  KOKKOS_INLINE_FUNCTION void add(FieldValue& v, const Char& c) const {
    v.digits += 1;
    v.value = (v.value * 10 + (c.c - '0')) % 1000000007LL;
  }
  KOKKOS_INLINE_FUNCTION FieldValue finish(const Field&, const FieldValue& v) const { return v; }
};
struct SumRecord {  // closes the fields region: field values of one record -> its summary
  using input_type = FieldValue;
  using parent_type = Record;
  using accumulator_type = RecordSummary;
  using output_type = RecordSummary;
  KOKKOS_INLINE_FUNCTION RecordSummary init(const Record& r) const { return RecordSummary{r.id, 0, 0, 0}; }
  KOKKOS_INLINE_FUNCTION void add(RecordSummary& s, const FieldValue& v) const {
    s.fields += 1;
    s.numeric += v.digits > 0;
    s.total += v.value;
  }
  KOKKOS_INLINE_FUNCTION RecordSummary finish(const Record&, const RecordSummary& s) const { return s; }
};
struct CountFields {  // single level: closes the fields region directly
  using input_type = Field;
  using parent_type = Record;
  using accumulator_type = RecordSummary;
  using output_type = RecordSummary;
  KOKKOS_INLINE_FUNCTION RecordSummary init(const Record& r) const { return RecordSummary{r.id, 0, 0, 0}; }
  KOKKOS_INLINE_FUNCTION void add(RecordSummary& s, const Field& f) const {
    s.fields += 1;
    s.total += f.len;
  }
  KOKKOS_INLINE_FUNCTION RecordSummary finish(const Record&, const RecordSummary& s) const { return s; }
};

struct Corpus {
  std::string text;
  std::vector<Record> records;
  Kokkos::View<char*> dtext;
  Kokkos::View<Record*> drecords;
};

Corpus make_corpus(int n) {
  std::mt19937 rng(7);
  Corpus c;
  const char* words[] = {"12", "7", "x", "", "3141", "abc", "42", "0", "9z9", "1000"};
  for (int r = 0; r < n; ++r) {
    Record rec{r, static_cast<int>(c.text.size()), 0};
    const int fields = static_cast<int>(rng() % 6) + 1;
    for (int f = 0; f < fields; ++f) {
      if (f > 0) c.text += ',';
      c.text += words[rng() % 10];
    }
    rec.len = static_cast<int>(c.text.size()) - rec.off;
    c.records.push_back(rec);
  }
  c.dtext = korch::dataflow::demo::upload_text(c.text);
  c.drecords = korch::dataflow::demo::upload_records(c.records);
  return c;
}

using korch::dataflow::demo::split;

bool in_order(const df::SinkOutput<RecordSummary>& out) {
  std::vector<int> last(1024, -1);
  for (std::size_t k = 0; k < out.values.size(); ++k) {
    const int i = out.instance[k] % 1024;
    if (out.values[k].id <= last[i]) return false;
    last[i] = out.values[k].id;
  }
  return true;
}

bool parser(const Args& a) {
  const Corpus c = make_corpus(a.n / 4 + 1);
  auto g = df::graph("record-parser")
               .source("records", df::from_view(c.drecords))
               .enumerate("fields", Fields{c.dtext}, "records", a.buffer)
               .node("nonempty", NonEmpty{}, "fields")
               .aggregate("per_record", CountFields{}, "nonempty", "fields")
               .sink<RecordSummary>("out", "per_record", c.records.size());
  std::printf("record parser: records -> enumerate fields -> drop empty -> per-record aggregate\n%s",
              g.compile().describe().c_str());
  auto p = df::make_pipeline(g, a.opt);
  const auto st = p.run();
  const auto out = p.output<RecordSummary>("out");
  bool ok = out.values.size() == c.records.size() && in_order(out);
  for (const auto& s : out.values) {
    int fields = 0;
    long long total = 0;
    for (const auto& f : split(c.text.substr(c.records[s.id].off, c.records[s.id].len)))
      if (!f.empty()) {
        ++fields;
        total += static_cast<long long>(f.size());
      }
    ok = ok && s.fields == fields && s.total == total;
  }
  std::printf(
      "  %zu records -> %zu summaries (first: record %d has %d non-empty fields, %lld "
      "chars): %s\n",
      c.records.size(), out.values.size(), out.values.empty() ? -1 : out.values[0].id,
      out.values.empty() ? 0 : out.values[0].fields, out.values.empty() ? 0LL : out.values[0].total,
      ok ? "matches" : "MISMATCH");
  print_stats(st);
  return ok;
}

bool nested(const Args& a) {
  const Corpus c = make_corpus(a.n / 4 + 1);
  auto g = df::graph("nested-parser")
               .source("records", df::from_view(c.drecords))
               .enumerate("fields", Fields{c.dtext}, "records", 64)
               .node("nonempty", NonEmpty{}, "fields")
               .enumerate("chars", Chars{c.dtext}, "nonempty", a.buffer)
               .node("digits", korch::dataflow::demo::Digits{}, "chars")
               .aggregate("per_field", ParseField{}, "digits", "chars")
               .aggregate("per_record", SumRecord{}, "per_field", "fields")
               .sink<RecordSummary>("out", "per_record", c.records.size());
  std::printf("nested enumeration: records -> fields -> characters (chars buffer %d slots)\n%s", a.buffer,
              g.compile().describe().c_str());
  auto p = df::make_pipeline(g, a.opt);
  const auto st = p.run();
  const auto out = p.output<RecordSummary>("out");
  bool ok = out.values.size() == c.records.size() && in_order(out);
  for (const auto& s : out.values) {
    RecordSummary ref{s.id, 0, 0, 0};
    for (const auto& f : split(c.text.substr(c.records[s.id].off, c.records[s.id].len))) {
      if (f.empty()) continue;
      FieldValue v{s.id, 0, 0, 0};
      for (char ch : f)
        if (ch >= '0' && ch <= '9') ParseField{}.add(v, Char{0, 0, ch});
      SumRecord{}.add(ref, v);
    }
    ok = ok && s.fields == ref.fields && s.numeric == ref.numeric && s.total == ref.total;
  }
  std::printf("  %zu records -> %zu summaries: %s\n", c.records.size(), out.values.size(), ok ? "matches" : "MISMATCH");
  print_stats(st);
  const auto& chars = st.node("chars");
  std::printf(
      "  'chars' blocked %lld times on its full buffer; each block flushed region %d only: "
      "per_field completed %lld flushes, per_record (region %d) %lld (= end of input per "
      "instance)\n",
      chars.blocks, p.graph().heads[p.graph().index_of("chars")], st.node("per_field").flushes,
      p.graph().heads[p.graph().index_of("fields")], st.node("per_record").flushes);
  return ok;
}

struct Demo {
  const char* name;
  bool (*run)(const Args&);
};
// In the order of demo_names (dataflow_command_line.hpp).
const Demo demos[] = {
    {"filters", filters}, {"expander", expander}, {"route", route}, {"parser", parser}, {"nested", nested}};

}  // namespace

int main(int argc, char** argv) {
  Args a;
  const auto program = korch::dataflow::demo::dataflow_command_line(a);
  if (auto rc = program->parse(argc, argv)) return *rc;
  const std::vector<std::string> chosen = korch::dataflow::demo::chosen_demos(*program);
  return program->run([&] {
    Kokkos::ScopeGuard kokkos(program->kokkos_argc(), program->kokkos_argv());
    bool ok = true;
    for (const std::string& name : chosen)
      for (const Demo& d : demos)
        if (name == d.name) ok = d.run(a) && ok;
    return ok ? 0 : 1;
  });
}
