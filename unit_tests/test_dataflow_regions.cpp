// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Dataflow regions and enumeration at run time: parent buffers that fill (flush + BLOCK, unblock on
// release), nested enumeration whose inner flushes stay inside the inner region, debug checks as
// korch::Error.
#include <doctest/doctest.h>

#include <korch/dataflow.hpp>
#include "record_nodes.hpp"
#include <korch/error.hpp>

#include "test_dataflow_graphs.hpp"
#include "test_error_support.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_dataflow_regions {

namespace df = korch::dataflow;
using korch::test::error_of;
using test_dataflow_graphs::ints;
using test_dataflow_graphs::label;
using test_dataflow_graphs::number;
using test_dataflow_graphs::opts;
using test_dataflow_graphs::Range;
using test_dataflow_graphs::Sum;

namespace {

// ---- the record parser: records -> fields -> characters ------------------------------------
using korch::dataflow::demo::Char;
using korch::dataflow::demo::Field;
using korch::dataflow::demo::Record;
struct FieldSum {
  int rec, field, digits, sum;
};
struct RecordSum {
  int id, fields, digits, sum, check;
};

using korch::dataflow::demo::Chars;
using korch::dataflow::demo::Digits;
using korch::dataflow::demo::Fields;
using korch::dataflow::demo::NonEmpty;
struct PerField {
  using input_type = Char;
  using parent_type = Field;
  using accumulator_type = FieldSum;
  using output_type = FieldSum;
  KOKKOS_INLINE_FUNCTION FieldSum init(const Field& f) const { return FieldSum{f.rec, f.idx, 0, 0}; }
  KOKKOS_INLINE_FUNCTION void add(FieldSum& a, const Char& c) const {
    a.digits += 1;
    a.sum = a.sum * 10 % 1000003 + (c.c - '0');
  }
  KOKKOS_INLINE_FUNCTION FieldSum finish(const Field&, const FieldSum& a) const { return a; }
};
struct PerRecord {
  using input_type = FieldSum;
  using parent_type = Record;
  using accumulator_type = RecordSum;
  using output_type = RecordSum;
  KOKKOS_INLINE_FUNCTION RecordSum init(const Record& r) const { return RecordSum{r.id, 0, 0, 0, 0}; }
  KOKKOS_INLINE_FUNCTION void add(RecordSum& a, const FieldSum& f) const {
    a.fields += 1;
    a.digits += f.digits;
    a.sum = (a.sum + f.sum) % 1000003;
    a.check = (a.check * 31 + f.field * 7 + f.sum) % 1000003;  // order-sensitive
  }
  KOKKOS_INLINE_FUNCTION RecordSum finish(const Record&, const RecordSum& a) const { return a; }
};
// single-level: per record, count of non-empty fields and total length
struct FieldStats {
  using input_type = Field;
  using parent_type = Record;
  using accumulator_type = RecordSum;
  using output_type = RecordSum;
  KOKKOS_INLINE_FUNCTION RecordSum init(const Record& r) const { return RecordSum{r.id, 0, 0, 0, 0}; }
  KOKKOS_INLINE_FUNCTION void add(RecordSum& a, const Field& f) const {
    a.fields += 1;
    a.sum += f.len;
    a.check = (a.check * 31 + f.idx) % 1000003;
  }
  KOKKOS_INLINE_FUNCTION RecordSum finish(const Record&, const RecordSum& a) const { return a; }
};

struct Corpus {
  std::string text;
  std::vector<Record> records;
  Kokkos::View<char*> dtext;
  Kokkos::View<Record*> drecords;
};

Corpus make_corpus(int n, unsigned seed) {
  std::mt19937 rng(seed);
  Corpus c;
  const std::string alphabet = "0123456789abc";
  for (int r = 0; r < n; ++r) {
    Record rec{r, static_cast<int>(c.text.size()), 0};
    const int fields = static_cast<int>(rng() % 7);  // 0..6 commas
    for (int f = 0; f <= fields; ++f) {
      if (f > 0) c.text += ',';
      const int len = static_cast<int>(rng() % 9);  // empty fields too
      for (int k = 0; k < len; ++k) c.text += alphabet[rng() % alphabet.size()];
    }
    if (rng() % 10 == 0) {  // some empty records
      c.text.resize(rec.off);
    }
    rec.len = static_cast<int>(c.text.size()) - rec.off;
    c.records.push_back(rec);
  }
  c.dtext = korch::dataflow::demo::upload_text(c.text);
  c.drecords = korch::dataflow::demo::upload_records(c.records);
  return c;
}

using korch::dataflow::demo::split;

std::vector<RecordSum> nested_reference(const Corpus& c) {
  std::vector<RecordSum> ref;
  for (const Record& r : c.records) {
    RecordSum a{r.id, 0, 0, 0, 0};
    const auto fields = split(c.text.substr(r.off, r.len));
    for (int f = 0; f < static_cast<int>(fields.size()); ++f) {
      if (fields[f].empty()) continue;
      FieldSum fs{r.id, f, 0, 0};
      for (char ch : fields[f])
        if (ch >= '0' && ch <= '9') {
          fs.digits += 1;
          fs.sum = fs.sum * 10 % 1000003 + (ch - '0');
        }
      PerRecord{}.add(a, fs);
    }
    ref.push_back(a);
  }
  return ref;
}

std::vector<RecordSum> flat_reference(const Corpus& c) {
  std::vector<RecordSum> ref;
  for (const Record& r : c.records) {
    RecordSum a{r.id, 0, 0, 0, 0};
    const auto fields = split(c.text.substr(r.off, r.len));
    for (int f = 0; f < static_cast<int>(fields.size()); ++f)
      if (!fields[f].empty()) FieldStats{}.add(a, Field{r.id, f, 0, static_cast<int>(fields[f].size())});
    ref.push_back(a);
  }
  return ref;
}

void check_records(const df::SinkOutput<RecordSum>& out, const std::vector<RecordSum>& ref) {
  REQUIRE(out.values.size() == ref.size());
  std::map<int, int> last;
  bool ordered = true, equal = true;
  for (std::size_t k = 0; k < out.values.size(); ++k) {
    const RecordSum& v = out.values[k];
    auto it = last.find(out.instance[k]);
    if (it != last.end() && it->second >= v.id) ordered = false;
    last[out.instance[k]] = v.id;
    REQUIRE(v.id >= 0);
    REQUIRE(v.id < static_cast<int>(ref.size()));
    const RecordSum& w = ref[v.id];
    equal = equal && v.fields == w.fields && v.digits == w.digits && v.sum == w.sum && v.check == w.check;
  }
  CHECK(ordered);
  CHECK(equal);
  std::vector<int> ids;
  for (const auto& v : out.values) ids.push_back(v.id);
  std::sort(ids.begin(), ids.end());
  CHECK(std::adjacent_find(ids.begin(), ids.end()) == ids.end());
}

struct Two {  // declares one output per input, emits two
  using input_type = int;
  using outputs = df::Outputs<df::Out<int, 1>>;
  template <class Emit>
  KOKKOS_INLINE_FUNCTION void operator()(const int& x, Emit& emit) const {
    emit(x);
    emit(x);
  }
};

auto nested_graph(const Corpus& c, int field_buffer, int char_buffer) {
  return df::graph("parser")
      .source("records", df::from_view(c.drecords))
      .enumerate("fields", Fields{c.dtext}, "records", field_buffer)
      .node("nonempty", NonEmpty{}, "fields")
      .enumerate("chars", Chars{c.dtext}, "nonempty", char_buffer)
      .node("digits", Digits{}, "chars")
      .aggregate("per_field", PerField{}, "digits", "chars")
      .aggregate("per_record", PerRecord{}, "per_field", "fields")
      .sink<RecordSum>("out", "per_record", c.records.size());
}

}  // namespace

TEST_CASE(
    "Regions: sequential disjoint regions run correctly (flush of the first stops at its "
    "terminal)") {
  const int n = 500;
  auto d = ints(n, 7);
  auto hd = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
  std::vector<int> ref;
  auto enum_sum = [](int p) {
    int acc = p;
    for (int i = 0; i < Range{}.count(p); ++i) acc += Range{}.element(p, i);
    return acc;
  };
  for (int i = 0; i < n; ++i) ref.push_back(enum_sum(enum_sum(hd(i))));
  auto g = df::graph("sequence")
               .source("in", df::from_view(d))
               .enumerate("e1", Range{}, "in", 2)
               .aggregate("a1", Sum{}, "e1", "e1")
               .enumerate("e2", Range{}, "a1", 3)
               .aggregate("a2", Sum{}, "e2", "e2")
               .sink<int>("out", "a2", n);
  for (int width : {1, 4, 32})
    for (int instances : {1, 4}) {
      auto p = df::make_pipeline(g, opts(width, 1.0, instances));
      p.run();
      auto out = p.output<int>("out");
      std::vector<int> got = out.values, want = ref;
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
      CHECK(got == want);
    }
}

TEST_CASE(
    "Enumeration: the record parser aggregates each record's fields, closed by the region "
    "boundary signal") {
  const Corpus c = make_corpus(400, 21);
  const auto ref = flat_reference(c);
  auto g = df::graph("fields")
               .source("records", df::from_view(c.drecords))
               .enumerate("fields", Fields{c.dtext}, "records", 8)
               .node("nonempty", NonEmpty{}, "fields")
               .aggregate("per_record", FieldStats{}, "nonempty", "fields")
               .sink<RecordSum>("out", "per_record", c.records.size());
  for (int width : {1, 5, 32, 128})
    for (double scale : {1.0, 4.0})
      for (int instances : {1, 6}) {
        CAPTURE(width);
        CAPTURE(scale);
        CAPTURE(instances);
        auto p = df::make_pipeline(g, opts(width, scale, instances));
        const auto st = p.run();
        check_records(p.output<RecordSum>("out"), ref);
        CHECK(st.node("fields").signals == 0);
        CHECK(st.node("per_record").signals == static_cast<long long>(c.records.size()));
      }
}

TEST_CASE(
    "Enumeration: a full parent buffer makes the enumerate node flush its region and "
    "block; releases unblock it and the results stay correct") {
  const Corpus c = make_corpus(300, 4);
  const auto ref = flat_reference(c);
  auto g = df::graph("small-buffer")
               .source("records", df::from_view(c.drecords))
               .enumerate("fields", Fields{c.dtext}, "records", 1)
               .node("nonempty", NonEmpty{}, "fields")
               .aggregate("per_record", FieldStats{}, "nonempty", "fields")
               .sink<RecordSum>("out", "per_record", c.records.size());
  for (int slots : {1, 2, 3}) {
    auto g2 = df::graph("small-buffer")
                  .source("records", df::from_view(c.drecords))
                  .enumerate("fields", Fields{c.dtext}, "records", slots)
                  .node("nonempty", NonEmpty{}, "fields")
                  .aggregate("per_record", FieldStats{}, "nonempty", "fields")
                  .sink<RecordSum>("out", "per_record", c.records.size());
    for (int width : {1, 16, 64}) {
      CAPTURE(slots);
      CAPTURE(width);
      auto p = df::make_pipeline(g2, opts(width, 4.0, 3));
      const auto st = p.run();
      check_records(p.output<RecordSum>("out"), ref);
      CHECK(st.node("fields").blocks > 0);
      // every block ends with a region flush completed by the aggregate
      CHECK(st.node("per_record").flushes >= st.node("fields").blocks);
    }
  }
  (void)g;
}

TEST_CASE(
    "Enumeration: nested records -> fields -> characters match the reference; the inner "
    "region's flushes never reach nodes outside it") {
  const Corpus c = make_corpus(300, 9);
  const auto ref = nested_reference(c);
  {
    const auto cg = nested_graph(c, 4, 4).compile();
    CHECK(number(cg, "fields") == 1);
    CHECK(number(cg, "chars") == 2);
    CHECK(label(cg, "nonempty") == 1);
    CHECK(label(cg, "digits") == 2);
    CHECK(label(cg, "per_field") == 2);
    CHECK(label(cg, "per_record") == 1);
  }
  for (int fb : {1, 64})
    for (int cb : {1, 2, 64})
      for (int width : {1, 8, 128})
        for (int instances : {1, 4}) {
          CAPTURE(fb);
          CAPTURE(cb);
          CAPTURE(width);
          CAPTURE(instances);
          auto p = df::make_pipeline(nested_graph(c, fb, cb), opts(width, 1.0, instances));
          const auto st = p.run();
          check_records(p.output<RecordSum>("out"), ref);
          if (cb == 1) CHECK(st.node("chars").blocks > 0);
          if (fb == 64 && cb == 1) {
            // the fields buffer never fills: per_record (region 1, outside the chars region)
            // completes only the end-of-input flush, once per instance, while the chars region
            // completed one flush per block of 'chars'
            CHECK(st.node("fields").blocks == 0);
            CHECK(st.node("per_record").flushes == instances);
            CHECK(st.node("nonempty").flushes == instances);
            CHECK(st.node("per_field").flushes >= st.node("chars").blocks);
            CHECK(st.node("digits").flushes >= st.node("chars").blocks);
          }
        }
}

TEST_CASE("Debug checks: emitting more than the declared maximum is reported as korch::Error") {
  Kokkos::View<int*> d("d", 50);
  auto g = df::graph("liar").source("in", df::from_view(d)).node("two", Two{}, "in").sink<int>("out", "two", 100);
  auto p = df::make_pipeline(g, opts(4, 2.0, 1));
  const std::string e = error_of([&] { p.run(); });
  CHECK(e.find("declares") != std::string::npos);
  CHECK(e.find("'two'") != std::string::npos);
}

TEST_CASE("Debug checks: a sink over its capacity is reported as korch::Error") {
  Kokkos::View<int*> d("d", 50);
  auto g = df::graph("small").source("in", df::from_view(d)).sink<int>("out", "in", 10);
  auto p = df::make_pipeline(g, opts(4, 2.0, 2));
  CHECK(error_of([&] { p.run(); }).find("capacity") != std::string::npos);
}

#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
constexpr bool kDeviceBuild = true;
#else
constexpr bool kDeviceBuild = false;
#endif
// A host-only build runs its default space on one thread: multi-lane host teams need two.
const bool kSingleThreadHost = std::string_view(Kokkos::DefaultExecutionSpace::name()) == "Serial";

// On device builds the test graph reads device Views, which the host task space cannot.
TEST_CASE("Pipelines run on the host task space (Kokkos::Serial where Kokkos has it) as well" *
          doctest::skip(kDeviceBuild)) {
#if !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP)  // host-accessible Views only
  const Corpus c = make_corpus(100, 2);
  auto p = df::make_pipeline<korch::HostTaskSpace>(nested_graph(c, 2, 2), opts(8, 2.0, 3));
  p.run();
  check_records(p.output<RecordSum>("out"), nested_reference(c));
#endif
}

TEST_CASE("Enumeration: multi-lane teams run the nested parser like one-lane teams" *
          doctest::skip(kSingleThreadHost)) {
  const int team = std::min(4, static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency()));
  REQUIRE_MESSAGE(team >= 2, "multi-lane teams need at least 2 threads in the default space (OMP_NUM_THREADS)");
  const Corpus c = make_corpus(200, 13);
  const auto ref = nested_reference(c);
  for (int width : {1, 7, 64})
    for (int buffer : {1, 8}) {
      CAPTURE(width);
      CAPTURE(buffer);
      df::Options o = opts(width, 1.0, 2);
      o.team_size = team;
      auto p = df::make_pipeline(nested_graph(c, buffer, buffer), o);
      p.run();
      check_records(p.output<RecordSum>("out"), ref);
    }
}

// The statistics that one instance's run makes the same wherever its state lives.
void check_same_stats(const df::RunStats& a, const df::RunStats& b) {
  REQUIRE(a.nodes.size() == b.nodes.size());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    CAPTURE(a.nodes[i].name);
    CHECK(a.nodes[i].firings == b.nodes[i].firings);
    CHECK(a.nodes[i].runs == b.nodes[i].runs);
    CHECK(a.nodes[i].lanes == b.nodes[i].lanes);
    CHECK(a.nodes[i].signals == b.nodes[i].signals);
    CHECK(a.nodes[i].flushes == b.nodes[i].flushes);
    CHECK(a.nodes[i].blocks == b.nodes[i].blocks);
  }
}

TEST_CASE("Instance memory: the nested parser runs the same in team scratch as in global memory") {
  const int threads = static_cast<int>(Kokkos::DefaultExecutionSpace().concurrency());
  const Corpus c = make_corpus(300, 17);
  const auto ref = nested_reference(c);
  for (int width : {1, 7, 32})
    for (int buffer : {1, 8})
      for (int team : {0, 2}) {
        if (team > threads || (kDeviceBuild && team > 0)) continue;  // multi-lane host teams need threads
        CAPTURE(width);
        CAPTURE(buffer);
        CAPTURE(team);
        df::Options o = opts(width, 1.0, 1);  // one instance: the same firings in either memory
        o.team_size = team;
        o.instance_memory = df::InstanceMemory::global;
        auto global = df::make_pipeline(nested_graph(c, buffer, buffer), o);
        o.instance_memory = df::InstanceMemory::team_scratch;
        auto scratch = df::make_pipeline(nested_graph(c, buffer, buffer), o);
        CHECK_FALSE(global.team_scratch());
        CHECK(scratch.team_scratch());
        const df::RunStats in_global = global.run();
        const df::RunStats in_scratch = scratch.run();
        CHECK(in_scratch.team_scratch);
        CHECK_FALSE(in_global.team_scratch);
        check_records(scratch.output<RecordSum>("out"), ref);
        check_same_stats(in_global, in_scratch);
        o.instances = 5;  // several instances, each its own scratch
        auto many = df::make_pipeline(nested_graph(c, buffer, buffer), o);
        many.run();
        check_records(many.output<RecordSum>("out"), ref);
      }
}

TEST_CASE("Instance memory: team scratch too small for one instance is an error naming both sizes") {
  const Corpus c = make_corpus(10, 3);
  df::Options o = opts(64, 64.0, 1);
  o.instance_memory = df::InstanceMemory::team_scratch;
  const std::string e = error_of([&] { df::make_pipeline(nested_graph(c, 64, 64), o); });
  CHECK(e.find("dataflow pipeline 'parser': one instance needs") != std::string::npos);
  CHECK(e.find("bytes of team scratch memory but") != std::string::npos);
  CHECK(e.find("use InstanceMemory::global or automatic") != std::string::npos);
  o.instance_memory = df::InstanceMemory::automatic;  // falls back to global memory
  auto p = df::make_pipeline(nested_graph(c, 64, 64), o);
  CHECK_FALSE(p.team_scratch());
  p.run();
  check_records(p.output<RecordSum>("out"), nested_reference(c));
}

TEST_CASE("Instance memory: automatic keeps host instances in global memory" * doctest::skip(kDeviceBuild)) {
  const Corpus c = make_corpus(10, 4);
  auto p = df::make_pipeline(nested_graph(c, 2, 2), opts(4, 1.0, 2));
  CHECK_FALSE(p.team_scratch());
  CHECK(p.instance_bytes() > 0);
}

// On a GPU the capped kernel spills part of the boss lane's bookkeeping to local memory; the
// enumeration regions' parent buffers and reference counts must come through it unchanged.
TEST_CASE("Register cap: the nested parser capped at 64 registers per lane gives the same records and firings") {
  const Corpus c = make_corpus(300, 23);
  const auto ref = nested_reference(c);
  for (int width : {7, 32}) {
    CAPTURE(width);
    df::Options o = opts(width, 1.0, 1);
    auto plain = df::make_pipeline(nested_graph(c, 8, 8), o);
    o.cap_registers = true;
    auto capped = df::make_pipeline(nested_graph(c, 8, 8), o);
    const df::RunStats uncapped_stats = plain.run();
    const df::RunStats capped_stats = capped.run();
    check_records(capped.output<RecordSum>("out"), ref);
    check_same_stats(uncapped_stats, capped_stats);
    CHECK(capped_stats.registers_capped == kDeviceBuild);  // host spaces launch the one kernel
    CHECK_FALSE(uncapped_stats.registers_capped);
    o.instances = 0;  // the space's default league, every instance capped
    auto many = df::make_pipeline(nested_graph(c, 8, 8), o);
    many.run();
    check_records(many.output<RecordSum>("out"), ref);
  }
}

}  // namespace test_dataflow_regions
