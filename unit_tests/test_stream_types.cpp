// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stream programs over other item types than double: bits to complex symbols to magnitudes, a user
// record through a computer and a transformer, the sequential interpreter against the parallel
// executor, and composition checks (korch::Error at run time, no overload at compile time); then
// computers that finish with other values than integers (a user struct, a double) bound into their
// continuations, with the same checks.
#include <doctest/doctest.h>

#include <korch/streams.hpp>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

using namespace korch::streams;

namespace {

using cf = std::complex<float>;

struct Record {
  int id;
  float x, y;
};

// Whether `a >> b` and `a | b` compile for these operand types.
template <class A, class B, class = void>
struct can_pipe : std::false_type {};
template <class A, class B>
struct can_pipe<A, B, std::void_t<decltype(std::declval<A>() >> std::declval<B>())>> : std::true_type {};
template <class A, class B, class = void>
struct can_par_pipe : std::false_type {};
template <class A, class B>
struct can_par_pipe<A, B, std::void_t<decltype(std::declval<A>() | std::declval<B>())>> : std::true_type {};

// A mismatched >>> or |>>>| of typed streams is a compile-time error: there is no overload.
static_assert(can_pipe<Stream<std::uint8_t, cf>, Stream<cf, double>>::value, "matching types compose");
static_assert(!can_pipe<Stream<std::uint8_t, cf>, Stream<double, double>>::value, "complex<float> into double");
static_assert(!can_par_pipe<Stream<Record, Record>, Stream<cf, Record>>::value, "Record into complex<float>");
static_assert(!std::is_convertible<Stream<double, double>, Comp>::value, "no silent fall back to untyped >>>");
static_assert(sizeof(Item) == 16 && alignof(Item) == 16, "items are 16-byte cells");

// What a measuring computer finishes with.
struct Stats {
  float mean;
  float peak;
  int count;
};

// Whether bind(var, c1, c2) compiles for these operand types.
template <class V, class C1, class C2, class = void>
struct can_bind : std::false_type {};
template <class V, class C1, class C2>
struct can_bind<V, C1, C2, std::void_t<decltype(bind(std::declval<V>(), std::declval<C1>(), std::declval<C2>()))>>
    : std::true_type {};

// bind through a typed variable compiles only when the first component finishes with its type.
static_assert(can_bind<Var<Stats>, Stream<double, double, Stats>, Stream<double, double>>::value, "Stats into Stats");
static_assert(!can_bind<Var<double>, Stream<double, double, Stats>, Stream<double, double>>::value,
              "Stats into double");
static_assert(!can_bind<Var<Stats>, Stream<double, double>, Stream<double, double, Stats>>::value,
              "an integer computer into Stats");
// A pipe finishes with its computer's value; two computers of different values do not pipe.
static_assert(
    std::is_same<decltype(std::declval<Stream<double, double>>() >> std::declval<Stream<double, double, Stats>>()),
                 Stream<double, double, Stats>>::value,
    "transformer >>> Stats computer finishes with Stats");
static_assert(!can_pipe<Stream<double, double, double>, Stream<double, double, Stats>>::value,
              "double computer >>> Stats computer");
static_assert(sizeof(Value) == 16 && alignof(Value) == 16, "values are 16-byte cells");

// 2 bits -> one unit-energy QPSK symbol (Gray mapping: bit 1 -> +, bit 0 -> -, per axis).
Stream<std::uint8_t, cf> qpsk() {
  return map<std::uint8_t, cf>("qpsk", {2, 1}, [](const std::uint8_t* in, cf* out) {
    const float a = 0.70710678f;
    out[0] = cf(in[0] ? a : -a, in[1] ? a : -a);
  });
}
Stream<cf, double> magnitude(double gain) {
  return map<cf, double>("magnitude", {1, 1}, [gain](const cf* in, double* out) { out[0] = gain * std::abs(in[0]); });
}

std::vector<std::uint8_t> bits(std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((i * 7 + i / 3) & 1u);
  return v;
}

ParallelOptions two_threads() {
  ParallelOptions o;
  o.threads = 2;
  o.timeout = std::chrono::seconds(30);
  return o;
}

}  // namespace

TEST_CASE("Typed streams: uint8 bits -> complex<float> QPSK symbols -> double magnitudes") {
  const auto in = bits(64);
  const auto symbols = from_items<cf>(run_sequential(qpsk(), in).output);
  REQUIRE(symbols.size() == 32);
  for (std::size_t k = 0; k < symbols.size(); ++k) {
    CHECK((symbols[k].real() > 0) == (in[2 * k] == 1));
    CHECK((symbols[k].imag() > 0) == (in[2 * k + 1] == 1));
  }
  const Stream<std::uint8_t, double> chain = qpsk() >> magnitude(2.0);
  CHECK(chain.comp().in_type() == ItemType::of<std::uint8_t>());
  CHECK(chain.comp().out_type() == ItemType::of<double>());
  const auto seq = run_sequential(chain, in);
  const auto mags = from_items<double>(seq.output);
  REQUIRE(mags.size() == 32);
  for (double m : mags) CHECK(m == doctest::Approx(2.0).epsilon(1e-6));
  // The same program with |>>>| on the parallel executor: the same cells.
  const auto par = run_parallel(qpsk() | magnitude(2.0), in, two_threads());
  CHECK(from_items<double>(par.output) == mags);
  CHECK(par.consumed == in.size());
}

TEST_CASE("Typed streams: a user record through a transformer and a computer, sequential and parallel") {
  // shift moves every record; batch takes 4 records, emits them in reverse order with the id
  // offset by the batch's first id, and returns the sum of the ids.
  const auto shift = map<Record, Record>("shift", {1, 1}, [](const Record* in, Record* out) {
    out[0] = {in[0].id, in[0].x + 1.0f, in[0].y * 2.0f};
  });
  const auto batch = take_block<Record, Record>(
      "batch", [](const Env&) { return std::size_t{4}; },
      [](const Record* in, std::size_t n, std::vector<Record>& out) {
        Value sum = 0;
        for (std::size_t i = n; i-- > 0;) {
          out.push_back({in[i].id + 100 * in[0].id, in[i].x, in[i].y});
          sum += in[i].id;
        }
        return sum;
      });
  std::vector<Record> in;
  for (int i = 0; i < 12; ++i) in.push_back({i, 0.5f * static_cast<float>(i), static_cast<float>(-i)});

  const auto seq = run_sequential(repeat(shift >> batch), in);
  const auto out = from_items<Record>(seq.output);
  REQUIRE(out.size() == 12);
  for (int b = 0; b < 3; ++b) {
    for (int j = 0; j < 4; ++j) {
      const Record& r = out[static_cast<std::size_t>(4 * b + j)];
      const int src = 4 * b + 3 - j;
      CHECK(r.id == src + 100 * 4 * b);
      CHECK(r.x == 0.5f * static_cast<float>(src) + 1.0f);
      CHECK(r.y == -2.0f * static_cast<float>(src));
    }
  }
  CHECK(seq.starved);

  // Loop bodies with |>>>| read a commit queue; bind passes the computer's value on.
  const auto last = take_block<Record, Record>(
      "last", [](const Env& e) { return static_cast<std::size_t>(e.at("n")); },
      [](const Record* in, std::size_t n, std::vector<Record>& out) {
        out.assign(in, in + n);
        return Value(n);
      });
  const auto par = run_parallel(repeat(shift | batch), in, two_threads());
  const auto par_out = from_items<Record>(par.output);
  REQUIRE(par_out.size() == out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    CHECK(par_out[i].id == out[i].id);
    CHECK(par_out[i].x == out[i].x);
    CHECK(par_out[i].y == out[i].y);
  }
  const auto program =
      bind("n",
           shift | take_block<Record, Record>(
                       "count", [](const Env&) { return std::size_t{1}; },
                       [](const Record* r, std::size_t, std::vector<Record>&) { return Value(r[0].id); }),
           last);
  in[0].id = 3;
  const auto s = from_items<Record>(run_sequential(program, in).output);
  const auto p = from_items<Record>(run_parallel(program, in, two_threads()).output);
  REQUIRE(s.size() == 3);
  REQUIRE(p.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(s[i].id == static_cast<int>(i) + 1);
    CHECK(p[i].id == s[i].id);
  }
}

TEST_CASE("Typed streams: a mismatched composition is a korch::Error naming both sides and both types") {
  const Comp legacy = map("legacy", {1, 1}, [](const Item* in, Item* out) { out[0] = in[0]; });
  CHECK(legacy.in_type() == ItemType::of<double>());
  CHECK_THROWS_WITH_AS(pipe(qpsk().comp(), legacy),
                       doctest::Contains("'qpsk' emits std::complex<float> but 'legacy' takes double"), korch::Error);
  CHECK_THROWS_WITH_AS(par_pipe(legacy, qpsk().comp()),
                       doctest::Contains("'legacy' emits double but 'qpsk' takes std::uint8_t"), korch::Error);
  const auto records = take_block<Record, Record>(
      "records", [](const Env&) { return std::size_t{1}; },
      [](const Record*, std::size_t, std::vector<Record>&) { return Value(0); });
  const Comp doubles = take_block(
      "doubles", [](const Env&) { return std::size_t{1}; },
      [](const Item*, std::size_t, std::vector<Item>&) { return Value(0); });
  CHECK_THROWS_WITH_AS(seq(records.comp(), doubles), doctest::Contains("'records' takes"), korch::Error);
  CHECK_THROWS_WITH_AS(seq(records.comp(), doubles), doctest::Contains("Record but 'doubles' takes double"),
                       korch::Error);
  CHECK_THROWS_WITH_AS(if_([](const Env&) { return true; }, records.comp(), doubles),
                       doctest::Contains("if of 'records' and 'doubles'"), korch::Error);
  // Wrapping an untyped component as the wrong Stream type.
  CHECK_THROWS_WITH_AS((Stream<cf, double>(legacy)), doctest::Contains("'legacy' takes double and emits double"),
                       korch::Error);
  // ret moves no items, so it fits anywhere.
  CHECK_NOTHROW(seq(ret<Record, Record>("zero", [](const Env&) { return Value(0); }), records));
  CHECK_NOTHROW(Stream<cf, cf>(with_types(legacy, ItemType::of<cf>(), ItemType::of<cf>())));
}

TEST_CASE("Typed streams: cells keep every value of up to 16 bytes exactly") {
  const std::vector<std::complex<double>> z{{1.5, -2.25}, {1e-300, 3e300}};
  CHECK(from_items<std::complex<double>>(to_items(z)) == z);
  const std::vector<std::uint8_t> b{0, 1, 255};
  CHECK(from_items<std::uint8_t>(to_items(b)) == b);
  const Item d = 0.1;  // untyped programs still read and write doubles
  CHECK(static_cast<double>(d) == 0.1);
  CHECK(d.as<double>() == 0.1);
  CHECK(ItemType::of<Record>().name().find("Record") != std::string::npos);
  CHECK(ItemType().any());
}

TEST_CASE("Typed streams: every typed leaf and combinator builds and runs") {
  // A stateful transformer: running sum of the bytes, as float.
  const auto sum = transformer<std::uint8_t, float>("sum", {1, 1}, [](const Env&) {
    auto acc = std::make_shared<float>(0.f);
    return TypedKernel<std::uint8_t, float>([acc](const std::uint8_t* in, float* out) { out[0] = *acc += in[0]; });
  });
  // A computer with a body of its own: takes two floats, emits their difference, returns it rounded.
  struct Diff : TypedBody<float, float> {
    std::size_t need() override { return 2; }
    bool step(const float* in, std::vector<float>& out, Value& result) override {
      out.push_back(in[1] - in[0]);
      result = static_cast<Value>(in[1] - in[0]);
      return true;
    }
  };
  const auto diff = computer<float, float>(
      "diff", [](const Env&) -> std::unique_ptr<TypedBody<float, float>> { return std::make_unique<Diff>(); });
  const auto zero = ret<float, float>("zero", [](const Env&) { return Value(0); });
  const std::vector<std::uint8_t> in{1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<Stream<std::uint8_t, float>> programs{
      sum >> times(Value(2), diff),
      sum >> times([](const Env&) { return Value(3); }, seq(zero, diff)),
      sum >> until([](Value v) { return v >= 6; }, standalone(diff)),
      sum | if_([](const Env&) { return true; }, diff, zero),
      sum >> repeat(bind("d", diff, diff)),
  };
  const std::vector<std::vector<float>> expect{
      {2, 4}, {2, 4, 6}, {2, 4, 6}, {2}, {2, 4, 6, 8},
  };
  for (std::size_t i = 0; i < programs.size(); ++i) {
    CAPTURE(i);
    const auto s = from_items<float>(run_sequential(programs[i], in).output);
    CHECK(s == expect[i]);
    CHECK(from_items<float>(run_parallel(programs[i], in, two_threads()).output) == s);
  }
}

namespace {

// Takes `block` doubles, passes them on, and finishes with their mean, peak magnitude and count.
Stream<double, double, Stats> measure(std::size_t block) {
  return take_block<double, double, Stats>(
      "measure", [block](const Env&) { return block; },
      [](const double* in, std::size_t n, std::vector<double>& out) {
        Stats s{0.f, 0.f, static_cast<int>(n)};
        for (std::size_t i = 0; i < n; ++i) {
          s.mean += static_cast<float>(in[i]) / static_cast<float>(n);
          s.peak = std::max(s.peak, static_cast<float>(std::abs(in[i])));
          out.push_back(in[i]);
        }
        return s;
      });
}

// Takes `block` doubles, emits them normalized by the bound Stats, and finishes with their sum.
Stream<double, double, double> normalize(const Var<Stats>& stats, std::size_t block) {
  return computer<double, double, double>("normalize", [stats, block](const Env& env) {
    struct Body : TypedBody<double, double, double> {
      Stats s;
      std::size_t n;
      Body(Stats s_, std::size_t n_) : s(s_), n(n_) {}
      std::size_t need() override { return n; }
      bool step(const double* in, std::vector<double>& out, double& result) override {
        result = 0;
        for (std::size_t i = 0; i < n; ++i) {
          out.push_back((in[i] - s.mean) / s.peak);
          result += out.back();
        }
        return true;
      }
    };
    return std::unique_ptr<TypedBody<double, double, double>>(std::make_unique<Body>(stats(env), block));
  });
}

std::vector<double> ramp(std::size_t n) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 0.25 * static_cast<double>((i * 5) % 11) - 1.0;
  return v;
}

template <class T>
T value_of(const RunResult& r) {
  REQUIRE(r.value);
  return r.value->as<T>();
}

}  // namespace

TEST_CASE("Stream values: a user struct and a double bound into continuations, sequential and parallel equal") {
  const Var<Stats> stats("stats");
  const Var<double> total("total");
  const auto pre = map<double, double>("pre", {1, 1}, [](const double* in, double* out) { out[0] = 1.5 * in[0]; });
  // stats <- measure 7 ; total <- normalize 5 ; ret (count + 2 total), looped until the value exceeds 5.
  const auto twice = ret<double, double, double>(
      "twice", [stats, total](const Env& e) { return static_cast<double>(stats(e).count) + 2 * total(e); });
  const auto round = bind(stats, measure(7), bind(total, normalize(stats, 5), twice));
  const auto program = pre | until([](double v) { return v > 5; }, round);
  static_assert(std::is_same<decltype(program), const Stream<double, double, double>>::value, "until keeps double");
  CHECK(program.comp().value_type() == ItemType::of<double>());
  CHECK(measure(7).comp().value_type() == ItemType::of<Stats>());

  const auto in = ramp(61);
  const auto s = run_sequential(program, in);
  REQUIRE(s.value);
  const auto p = run_parallel(program, in, two_threads());
  CHECK(from_items<double>(p.output) == from_items<double>(s.output));
  CHECK(value_of<double>(p) == value_of<double>(s));

  // The sequential model, written out: rounds of 12 inputs until the round value exceeds 5.
  std::vector<double> expect;
  double last = 0;
  for (std::size_t at = 0; at + 12 <= in.size() && !(last > 5); at += 12) {
    Stats st{0.f, 0.f, 7};
    for (std::size_t i = 0; i < 7; ++i) {
      const double x = 1.5 * in[at + i];
      st.mean += static_cast<float>(x) / 7.f;
      st.peak = std::max(st.peak, static_cast<float>(std::abs(x)));
      expect.push_back(x);
    }
    double sum = 0;
    for (std::size_t i = 7; i < 12; ++i) {
      expect.push_back((1.5 * in[at + i] - st.mean) / st.peak);
      sum += expect.back();
    }
    last = 7 + 2 * sum;
  }
  REQUIRE(last > 5);
  CHECK(from_items<double>(s.output) == expect);
  CHECK(value_of<double>(s) == last);

  // times finishes with the last round's Stats; a plain bind name reads it through Env::get.
  const auto three = pre >> times(3, measure(4));
  const auto st = run_sequential(three, in);
  CHECK(value_of<Stats>(st).count == 4);
  CHECK(value_of<Stats>(st).mean == value_of<Stats>(run_parallel(three, in, two_threads())).mean);
  const auto peak = ret<double, double, double>("peak", [](const Env& e) { return double(e.get<Stats>("m").peak); });
  const auto named = bind("m", measure(3), peak);
  CHECK(value_of<double>(run_sequential(named, {0.5, -2.0, 1.0})) == 2.0);
  CHECK(value_of<double>(run_parallel(named, {0.5, -2.0, 1.0}, two_threads())) == 2.0);
}

TEST_CASE("Stream values: untyped computers declare their value types; integer programs are unchanged") {
  const Comp mean = with_value_type(take_block(
                                        "mean", [](const Env&) { return std::size_t{4}; },
                                        [](const Item* in, std::size_t n, std::vector<Item>&) {
                                          double m = 0;
                                          for (std::size_t i = 0; i < n; ++i) m += in[i] / double(n);
                                          return Value::of(m);
                                        }),
                                    ItemType::of<double>());
  const Comp centre = expects(transformer("centre", {1, 1},
                                          [](const Env& e) {
                                            const double m = e.get<double>("m");
                                            return Kernel([m](const Item* in, Item* out) { out[0] = in[0] - m; });
                                          }),
                              "m", ItemType::of<double>());
  const Comp program = bind("m", mean, centre);
  CHECK(program.value_type().any());  // the continuation is a transformer
  CHECK(program.node().reads.empty());
  const std::vector<Item> in{1.0, 2.0, 3.0, 6.0, 10.0, 4.0};
  const auto s = run_sequential(program, in);
  CHECK(from_items<double>(s.output) == std::vector<double>{7.0, 1.0});
  CHECK(from_items<double>(run_parallel(program, in, two_threads()).output) == from_items<double>(s.output));

  // An integer computer: the value converts to and from std::int64_t, arithmetic included.
  const Comp count = take_block(
      "count", [](const Env&) { return std::size_t{3}; },
      [](const Item*, std::size_t n, std::vector<Item>&) {
        Value v = 0;
        for (std::size_t i = 0; i < n; ++i) v += 2;
        v |= 1;
        return v;
      });
  CHECK(count.value_type() == ItemType::of<std::int64_t>());
  const auto r = run_sequential(bind("k", count, ret("k+1", [](const Env& e) { return e.at("k") + 1; })), in);
  REQUIRE(r.value);
  CHECK(*r.value == 8);
  CHECK(r.value->as<std::int64_t>() == 8);
}

TEST_CASE("Stream values: a continuation reading the wrong type is a korch::Error naming both sides") {
  const auto m = measure(2).comp();
  const Comp wants_double = expects(ret("use", [](const Env&) { return Value(0); }), "s", ItemType::of<double>());
  CHECK_THROWS_WITH_AS(bind("s", m, wants_double),
                       doctest::Contains("'measure' finishes with (anonymous namespace)::Stats but the continuation "
                                         "'use' reads s as double"),
                       korch::Error);
  // Other variables pass through to an enclosing bind, which checks them.
  const Comp inner = bind("t", m, wants_double);
  CHECK(inner.node().reads.size() == 1);
  CHECK_THROWS_WITH_AS(bind("s", m, inner), doctest::Contains("reads s as double"), korch::Error);
  CHECK_NOTHROW(
      bind("s", with_value_type(ret("d", [](const Env&) { return Value::of(1.5); }), ItemType::of<double>()), inner));
  // The typed layer records the read through expects.
  const Var<double> s("s");
  const auto zero = ret<double, double>("zero", [](const Env&) { return Value(0); });
  CHECK_THROWS_WITH_AS(bind("s", measure(2), expects(s, zero)), doctest::Contains("reads s as double"), korch::Error);

  // Without a declaration the read itself is checked when it happens, on both executors.
  const Comp reads_int = ret("int", [](const Env& e) { return Value(e.get<std::int64_t>("s")); });
  const Comp program = bind("s", m, reads_int);
  const std::vector<Item> in{1.0, 2.0};
  const char* message = "variable 's' holds a (anonymous namespace)::Stats but is read as std::int64_t";
  CHECK_THROWS_WITH_AS(run_sequential(program, in), doctest::Contains(message), korch::Error);
  CHECK_THROWS_WITH_AS(run_parallel(program, in, two_threads()), doctest::Contains(message), korch::Error);

  // if's branches finish one computer, so they finish with one type; so does a wrapped Stream.
  CHECK_THROWS_WITH_AS(if_([](const Env&) { return true; }, m, zero.comp()),
                       doctest::Contains("'measure' finishes with (anonymous namespace)::Stats but 'zero' finishes "
                                         "with std::int64_t"),
                       korch::Error);
  CHECK_THROWS_WITH_AS((Stream<double, double, double>(m)),
                       doctest::Contains("'measure' finishes with (anonymous namespace)::Stats"), korch::Error);
  CHECK_THROWS_WITH_AS(with_value_type(map("t", {1, 1}, [](const Item*, Item*) {}), ItemType::of<double>()),
                       doctest::Contains("leaf computers"), korch::Error);
}
