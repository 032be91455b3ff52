// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The typed facade of stream programs: Stream<In, Out> is a component that takes In items and emits
// Out items. Its leaves get typed kernels (const In* in, Out* out) and typed computer bodies, and
// its combinators only accept components whose types fit, so a mismatched `a >> b` (>>>) or
// `a | b` (|>>>|) does not compile: operator>>(Stream<A, B>, Stream<B, C>) is the only overload and
// there is no conversion from Stream to the untyped Comp. bind, seq and if_ take two components of
// the same Stream type.
//
// Underneath, a Stream holds an ordinary Comp whose leaves carry the matching ItemTypes, so it runs
// on the sequential interpreter and the parallel executor like any program (stream.comp()), and an
// untyped Comp can be wrapped as Stream<In, Out>(comp), which checks its item types at run time.
//
//   auto bits_to_symbols = map<std::uint8_t, std::complex<float>>("qpsk", {2, 1}, qpsk_kernel);
//   auto magnitudes = map<std::complex<float>, double>("abs", {1, 1}, abs_kernel);
//   Stream<std::uint8_t, double> rx = bits_to_symbols >> magnitudes;
//   auto out = from_items<double>(run_sequential(rx, bits).output);
#pragma once

#include <korch/streams/parallel.hpp>
#include <korch/streams/program.hpp>
#include <korch/streams/sequential.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace korch::streams {

template <class In, class Out>
class Stream {
 public:
  using input_type = In;
  using output_type = Out;
  // Wraps an untyped component; throws korch::Error when it takes or emits other item types.
  explicit Stream(Comp c) : comp_(std::move(c)) {
    const ItemType in = ItemType::of<In>(), out = ItemType::of<Out>();
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

// A typed computer's body, one per activation (see ComputerBody).
template <class In, class Out>
class TypedBody {
 public:
  virtual ~TypedBody() = default;
  virtual std::size_t need() = 0;
  virtual bool step(const In* in, std::vector<Out>& out, Value& result) = 0;
};

namespace detail {

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

template <class In, class Out>
class CellBody final : public ComputerBody {
 public:
  explicit CellBody(std::unique_ptr<TypedBody<In, Out>> body) : body_(std::move(body)) {}
  std::size_t need() override { return need_ = body_->need(); }
  bool step(const Item* in, std::vector<Item>& out, Value& result) override {
    out_.clear();
    const bool done = body_->step(in_.fill(in, need_), out_, result);
    for (const Out& y : out_) out.push_back(Item::of(y));
    return done;
  }

 private:
  std::unique_ptr<TypedBody<In, Out>> body_;
  TypedBuffer<In> in_;
  std::vector<Out> out_;
  std::size_t need_ = 0;
};

template <class In, class Out>
class TakeBlockBody final : public TypedBody<In, Out> {
 public:
  using F = std::function<Value(const In*, std::size_t, std::vector<Out>&)>;
  TakeBlockBody(std::size_t n, const F* f) : n_(n), f_(f) {}
  std::size_t need() override { return n_; }
  bool step(const In* in, std::vector<Out>& out, Value& result) override {
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
template <class In, class Out>
Stream<In, Out> computer(std::string name, std::function<std::unique_ptr<TypedBody<In, Out>>(const Env&)> make) {
  if (!make) throw Error::format("computer '{}': no body factory", name);
  return detail::typed_leaf<In, Out>(
      streams::computer(std::move(name), [make = std::move(make)](const Env& env) -> std::unique_ptr<ComputerBody> {
        return std::make_unique<detail::CellBody<In, Out>>(make(env));
      }));
}
template <class In, class Out>
Stream<In, Out> take_block(std::string name, std::function<std::size_t(const Env&)> n,
                           std::function<Value(const In*, std::size_t, std::vector<Out>&)> f) {
  using F = typename detail::TakeBlockBody<In, Out>::F;
  auto shared = std::make_shared<F>(std::move(f));  // lives in the program tree, which outlives activations
  return computer<In, Out>(std::move(name),
                           [n = std::move(n), shared](const Env& env) -> std::unique_ptr<TypedBody<In, Out>> {
                             return std::make_unique<detail::TakeBlockBody<In, Out>>(n(env), shared.get());
                           });
}
template <class In, class Out>
Stream<In, Out> ret(std::string name, std::function<Value(const Env&)> v) {
  return Stream<In, Out>(streams::ret(std::move(name), std::move(v)));
}

// ---- typed combinators ----
template <class A, class B, class C>
Stream<A, C> pipe(const Stream<A, B>& a, const Stream<B, C>& b) {
  return Stream<A, C>(pipe(a.comp(), b.comp()));
}
template <class A, class B, class C>
Stream<A, C> par_pipe(const Stream<A, B>& a, const Stream<B, C>& b) {
  return Stream<A, C>(par_pipe(a.comp(), b.comp()));
}
template <class A, class B, class C>
Stream<A, C> operator>>(const Stream<A, B>& a, const Stream<B, C>& b) {
  return pipe(a, b);
}
template <class A, class B, class C>
Stream<A, C> operator|(const Stream<A, B>& a, const Stream<B, C>& b) {
  return par_pipe(a, b);
}
template <class I, class O>
Stream<I, O> bind(std::string var, const Stream<I, O>& c1, const Stream<I, O>& c2) {
  return Stream<I, O>(bind(std::move(var), c1.comp(), c2.comp()));
}
template <class I, class O>
Stream<I, O> seq(const Stream<I, O>& c1, const Stream<I, O>& c2) {
  return Stream<I, O>(seq(c1.comp(), c2.comp()));
}
template <class I, class O>
Stream<I, O> repeat(const Stream<I, O>& body) {
  return Stream<I, O>(repeat(body.comp()));
}
template <class I, class O>
Stream<I, O> times(std::function<Value(const Env&)> n, const Stream<I, O>& body) {
  return Stream<I, O>(times(std::move(n), body.comp()));
}
template <class I, class O>
Stream<I, O> times(Value n, const Stream<I, O>& body) {
  return Stream<I, O>(times(n, body.comp()));
}
template <class I, class O>
Stream<I, O> until(std::function<bool(Value)> pred, const Stream<I, O>& body) {
  return Stream<I, O>(until(std::move(pred), body.comp()));
}
template <class I, class O>
Stream<I, O> if_(std::function<bool(const Env&)> cond, const Stream<I, O>& a, const Stream<I, O>& b) {
  return Stream<I, O>(if_(std::move(cond), a.comp(), b.comp()));
}
template <class I, class O>
Stream<I, O> standalone(const Stream<I, O>& c) {
  return Stream<I, O>(standalone(c.comp()));
}

// ---- running a typed program: typed input; the output cells hold Out (from_items<Out>) ----
template <class In, class Out>
RunResult run_sequential(const Stream<In, Out>& program, const std::vector<In>& input, const Env& env = {}) {
  return run_sequential(program.comp(), to_items(input), env);
}
template <class In, class Out>
ParallelResult run_parallel(const Stream<In, Out>& program, const std::vector<In>& input,
                            const ParallelOptions& options = {}, ThreadTeam* team = nullptr, const Env& env = {}) {
  return run_parallel(program.comp(), to_items(input), options, team, env);
}

}  // namespace korch::streams
