// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The typed facade of stream programs: Stream<In, Out> is a component that takes In items and emits
// Out items. Its leaves get typed kernels (const In* in, Out* out) and typed computer bodies, and
// its combinators only accept components whose types fit, so a mismatched `a >> b` (>>>) or
// `a | b` (|>>>|) does not compile: operator>>(Stream<A, B>, Stream<B, C>) is the only overload and
// there is no conversion from Stream to the untyped Comp. bind, seq and if_ take two components of
// the same item types.
//
// The third parameter is what a computer finishes with: Stream<In, Out, R> (R = Value, the integer
// cell, when left out; a transformer leaves it so). computer, take_block and ret take R as their
// third template argument, and a typed variable Var<R> names what bind passes on: bind(x, c1, c2)
// compiles only when c1 finishes with x's type, and the continuation's leaves read it as x(env),
// which returns an R. until's predicate takes an R.
//
// Underneath, a Stream holds an ordinary Comp whose leaves carry the matching ItemTypes, so it runs
// on the sequential interpreter and the parallel executor like any program (stream.comp()), and an
// untyped Comp can be wrapped as Stream<In, Out>(comp), which checks its item types at run time.
//
//   auto bits_to_symbols = map<std::uint8_t, std::complex<float>>("qpsk", {2, 1}, qpsk_kernel);
//   auto magnitudes = map<std::complex<float>, double>("abs", {1, 1}, abs_kernel);
//   Stream<std::uint8_t, double> rx = bits_to_symbols >> magnitudes;
//   auto out = from_items<double>(run_sequential(rx, bits).output);
//
//   Var<Stats> stats("stats");
//   auto measure = take_block<double, double, Stats>("measure", block, summarize);  // returns a Stats
//   auto scale = transformer<double, double>("scale", {1, 1}, [stats](const Env& e) { ... stats(e) ... });
//   Stream<double, double> agc = bind(stats, measure, expects(stats, scale));
#pragma once

#include <korch/streams/parallel.hpp>
#include <korch/streams/program.hpp>
#include <korch/streams/sequential.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace korch::streams {

template <class In, class Out, class R = Value>
class Stream {
 public:
  using input_type = In;
  using output_type = Out;
  using value_type = R;
  // Wraps an untyped component; throws korch::Error when it takes, emits or finishes with other types.
  explicit Stream(Comp c) : comp_(std::move(c)) {
    const ItemType in = ItemType::of<In>(), out = ItemType::of<Out>(), value = value_type_of<R>();
    if (!comp_.value_type().compatible(value)) {
      throw Error::format(
          "stream program: computer '{}' finishes with {}, so it is not a Stream<{}, {}, {}>; wrap it as "
          "Stream<{}, {}, {}> or declare its leaves' value type (with_value_type)",
          comp_.name(), comp_.value_type().name(), in.name(), out.name(), value.name(), in.name(), out.name(),
          comp_.value_type().name());
    }
    if (comp_.in_type().compatible(in) && comp_.out_type().compatible(out)) return;
    throw Error::format(
        "stream program: component '{}' takes {} and emits {}, so it is not a Stream<{}, {}>; wrap it as "
        "Stream<{}, {}> or declare its leaves' item types (with_types)",
        comp_.name(), comp_.in_type().name(), comp_.out_type().name(), in.name(), out.name(), comp_.in_type().name(),
        comp_.out_type().name());
  }
  const Comp& comp() const noexcept { return comp_; }
  bool is_computer() const { return comp_.is_computer(); }
  const std::string& name() const { return comp_.name(); }

 private:
  Comp comp_;
};

template <class In, class Out>
using TypedKernel = std::function<void(const In* in, Out* out)>;

// A typed computer's body, one per activation (see ComputerBody); it finishes with an R.
template <class In, class Out, class R = Value>
class TypedBody {
 public:
  virtual ~TypedBody() = default;
  virtual std::size_t need() = 0;
  virtual bool step(const In* in, std::vector<Out>& out, R& result) = 0;
};

// A bound variable of type T: bind(Var<T>, c1, c2) takes only a c1 that finishes with a T, and
// x(env) reads it in the continuation.
template <class T>
class Var {
 public:
  explicit Var(std::string name) : name_(std::move(name)) { check_item_type<T>(); }
  const std::string& name() const noexcept { return name_; }
  T operator()(const Env& env) const { return env.get<T>(name_); }

 private:
  std::string name_;
};

namespace detail {

// Keeps a parameter out of template argument deduction (the explicit or default argument counts).
template <class T>
struct NonDeduced {
  using type = T;
};
template <class T>
using non_deduced_t = typename NonDeduced<T>::type;

// What a pipe finishes with: its computer's value type; the side left at Value is the transformer.
template <class R1, class R2, class = void>
struct PipeValue {};
template <class R>
struct PipeValue<R, R> {
  using type = R;
};
template <class R>
struct PipeValue<Value, R, std::enable_if_t<!std::is_same<R, Value>::value>> {
  using type = R;
};
template <class R>
struct PipeValue<R, Value, std::enable_if_t<!std::is_same<R, Value>::value>> {
  using type = R;
};
template <class R1, class R2>
using pipe_value_t = typename PipeValue<R1, R2>::type;

// Typed values unpacked from cells (a plain array: std::vector<bool> has no data()).
template <class T>
class TypedBuffer {
 public:
  T* fill(const Item* cells, std::size_t n) {
    if (n > size_) {
      data_.reset(new T[n]);
      size_ = n;
    }
    for (std::size_t i = 0; i < n; ++i) data_[i] = cells[i].template as<T>();
    return data_.get();
  }

 private:
  std::unique_ptr<T[]> data_;
  std::size_t size_ = 0;
};

// One activation's cell kernel around a typed kernel, with buffers of its own.
template <class In, class Out>
Kernel cell_kernel(TypedKernel<In, Out> k, Cardinality card) {
  auto in = std::make_shared<TypedBuffer<In>>();
  auto out = std::make_shared<std::unique_ptr<Out[]>>(new Out[card.out]);
  return [k = std::move(k), card, in, out](const Item* x, Item* y) {
    k(in->fill(x, card.in), out->get());
    for (std::size_t i = 0; i < card.out; ++i) y[i] = Item::of((*out)[i]);
  };
}

template <class In, class Out, class R>
class CellBody final : public ComputerBody {
 public:
  explicit CellBody(std::unique_ptr<TypedBody<In, Out, R>> body) : body_(std::move(body)) {}
  std::size_t need() override { return need_ = body_->need(); }
  bool step(const Item* in, std::vector<Item>& out, Value& result) override {
    out_.clear();
    R typed = result.template as<R>();
    const bool done = body_->step(in_.fill(in, need_), out_, typed);
    result = Value::of(typed);
    for (const Out& y : out_) out.push_back(Item::of(y));
    return done;
  }

 private:
  std::unique_ptr<TypedBody<In, Out, R>> body_;
  TypedBuffer<In> in_;
  std::vector<Out> out_;
  std::size_t need_ = 0;
};

template <class In, class Out, class R>
class TakeBlockBody final : public TypedBody<In, Out, R> {
 public:
  using F = std::function<R(const In*, std::size_t, std::vector<Out>&)>;
  TakeBlockBody(std::size_t n, const F* f) : n_(n), f_(f) {}
  std::size_t need() override { return n_; }
  bool step(const In* in, std::vector<Out>& out, R& result) override {
    result = (*f_)(in, n_, out);
    return true;
  }

 private:
  std::size_t n_;
  const F* f_;
};

template <class In, class Out>
Stream<In, Out> typed_leaf(const Comp& leaf) {
  return Stream<In, Out>(with_types(leaf, ItemType::of<In>(), ItemType::of<Out>()));
}
template <class In, class Out, class R>
Stream<In, Out, R> typed_computer(const Comp& leaf, ItemType in, ItemType out) {
  return Stream<In, Out, R>(with_value_type(with_types(leaf, std::move(in), std::move(out)), value_type_of<R>()));
}

}  // namespace detail

// ---- typed leaves (explicit template arguments: map<In, Out>(...)) ----
template <class In, class Out>
Stream<In, Out> transformer(std::string name, Cardinality card, std::function<TypedKernel<In, Out>(const Env&)> make) {
  if (!make) throw Error::format("transformer '{}': no kernel factory", name);
  return detail::typed_leaf<In, Out>(streams::transformer(
      std::move(name), card,
      [make = std::move(make), card](const Env& env) { return detail::cell_kernel<In, Out>(make(env), card); }));
}
template <class In, class Out>
Stream<In, Out> map(std::string name, Cardinality card, TypedKernel<In, Out> kernel) {
  if (!kernel) throw Error::format("transformer '{}': no kernel", name);
  return transformer<In, Out>(std::move(name), card,
                              [kernel = std::move(kernel)](const Env&) -> TypedKernel<In, Out> { return kernel; });
}
template <class In, class Out, class R = Value>
Stream<In, Out, R> computer(
    std::string name, detail::non_deduced_t<std::function<std::unique_ptr<TypedBody<In, Out, R>>(const Env&)>> make) {
  if (!make) throw Error::format("computer '{}': no body factory", name);
  return detail::typed_computer<In, Out, R>(
      streams::computer(std::move(name),
                        [make = std::move(make)](const Env& env) -> std::unique_ptr<ComputerBody> {
                          return std::make_unique<detail::CellBody<In, Out, R>>(make(env));
                        }),
      ItemType::of<In>(), ItemType::of<Out>());
}
template <class In, class Out, class R = Value>
Stream<In, Out, R> take_block(std::string name, std::function<std::size_t(const Env&)> n,
                              detail::non_deduced_t<std::function<R(const In*, std::size_t, std::vector<Out>&)>> f) {
  using F = typename detail::TakeBlockBody<In, Out, R>::F;
  auto shared = std::make_shared<F>(std::move(f));  // lives in the program tree, which outlives activations
  return computer<In, Out, R>(std::move(name),
                              [n = std::move(n), shared](const Env& env) -> std::unique_ptr<TypedBody<In, Out, R>> {
                                return std::make_unique<detail::TakeBlockBody<In, Out, R>>(n(env), shared.get());
                              });
}
// Takes and emits nothing (its item types stay open) and finishes with v(env).
template <class In, class Out, class R = Value>
Stream<In, Out, R> ret(std::string name, detail::non_deduced_t<std::function<R(const Env&)>> v) {
  if (!v) throw Error::format("computer '{}': no value function", name);
  return detail::typed_computer<In, Out, R>(
      streams::ret(std::move(name), [v = std::move(v)](const Env& env) { return Value::of(v(env)); }), ItemType(),
      ItemType());
}

// ---- typed combinators ----
template <class A, class B, class C, class R1, class R2>
Stream<A, C, detail::pipe_value_t<R1, R2>> pipe(const Stream<A, B, R1>& a, const Stream<B, C, R2>& b) {
  return Stream<A, C, detail::pipe_value_t<R1, R2>>(pipe(a.comp(), b.comp()));
}
template <class A, class B, class C, class R1, class R2>
Stream<A, C, detail::pipe_value_t<R1, R2>> par_pipe(const Stream<A, B, R1>& a, const Stream<B, C, R2>& b) {
  return Stream<A, C, detail::pipe_value_t<R1, R2>>(par_pipe(a.comp(), b.comp()));
}
template <class A, class B, class C, class R1, class R2>
Stream<A, C, detail::pipe_value_t<R1, R2>> operator>>(const Stream<A, B, R1>& a, const Stream<B, C, R2>& b) {
  return pipe(a, b);
}
template <class A, class B, class C, class R1, class R2>
Stream<A, C, detail::pipe_value_t<R1, R2>> operator|(const Stream<A, B, R1>& a, const Stream<B, C, R2>& b) {
  return par_pipe(a, b);
}
// x <- c1 ; c2 with a typed variable: c1 must finish with x's type.
template <class I, class O, class R, class R2>
Stream<I, O, R2> bind(const Var<R>& var, const Stream<I, O, R>& c1, const Stream<I, O, R2>& c2) {
  return Stream<I, O, R2>(bind(var.name(), c1.comp(), c2.comp()));
}
// With a plain name the continuation's declared reads (expects) are checked when bind is built.
template <class I, class O, class R1, class R2>
Stream<I, O, R2> bind(std::string var, const Stream<I, O, R1>& c1, const Stream<I, O, R2>& c2) {
  return Stream<I, O, R2>(bind(std::move(var), c1.comp(), c2.comp()));
}
// This copy of c declares that it reads var (checked by an enclosing untyped bind).
template <class T, class I, class O, class R>
Stream<I, O, R> expects(const Var<T>& var, const Stream<I, O, R>& c) {
  return Stream<I, O, R>(expects(c.comp(), var.name(), value_type_of<T>()));
}
template <class I, class O, class R1, class R2>
Stream<I, O, R2> seq(const Stream<I, O, R1>& c1, const Stream<I, O, R2>& c2) {
  return Stream<I, O, R2>(seq(c1.comp(), c2.comp()));
}
template <class I, class O, class R>
Stream<I, O> repeat(const Stream<I, O, R>& body) {
  return Stream<I, O>(repeat(body.comp()));
}
template <class I, class O, class R>
Stream<I, O, R> times(std::function<Value(const Env&)> n, const Stream<I, O, R>& body) {
  return Stream<I, O, R>(times(std::move(n), body.comp()));
}
template <class I, class O, class R>
Stream<I, O, R> times(std::int64_t n, const Stream<I, O, R>& body) {
  return Stream<I, O, R>(times(n, body.comp()));
}
template <class I, class O, class R>
Stream<I, O, R> until(detail::non_deduced_t<std::function<bool(R)>> pred, const Stream<I, O, R>& body) {
  if (!pred) throw Error::format("stream program: until '{}' has no predicate", body.name());
  return Stream<I, O, R>(until([pred = std::move(pred)](Value v) { return pred(v.template as<R>()); }, body.comp()));
}
template <class I, class O, class R>
Stream<I, O, R> if_(std::function<bool(const Env&)> cond, const Stream<I, O, R>& a, const Stream<I, O, R>& b) {
  return Stream<I, O, R>(if_(std::move(cond), a.comp(), b.comp()));
}
template <class I, class O, class R>
Stream<I, O, R> standalone(const Stream<I, O, R>& c) {
  return Stream<I, O, R>(standalone(c.comp()));
}

// ---- running a typed program: typed input; the output cells hold Out (from_items<Out>), the value an R
// (result.value->as<R>()) ----
template <class In, class Out, class R>
RunResult run_sequential(const Stream<In, Out, R>& program, const std::vector<In>& input, const Env& env = {}) {
  return run_sequential(program.comp(), to_items(input), env);
}
template <class In, class Out, class R>
ParallelResult run_parallel(const Stream<In, Out, R>& program, const std::vector<In>& input,
                            const ParallelOptions& options = {}, ThreadTeam* team = nullptr, const Env& env = {}) {
  return run_parallel(program.comp(), to_items(input), options, team, env);
}

}  // namespace korch::streams
