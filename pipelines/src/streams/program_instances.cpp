// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The tick/process instances of stream program components: the reference semantics shared by the
// sequential interpreter and the parallel executor's tasks. They move item cells without looking
// inside, so they serve every item type.
#include <korch/streams/program.hpp>

#include <memory>
#include <utility>
#include <vector>

namespace korch::streams {

namespace {

class TransformerInstance final : public Instance {
 public:
  TransformerInstance(Kernel k, Cardinality c) : k_(std::move(k)), in_(c.in), out_(c.out) {}
  void tick(Signal& s) override {
    if (pos_ < valid_) return s.yield(out_[pos_++]);
    s.consume();
  }
  void process(Item x, Signal& s) override {
    in_[have_++] = x;
    if (have_ < in_.size()) return s.skip();
    have_ = 0;
    k_(in_.data(), out_.data());
    valid_ = out_.size();
    pos_ = 1;
    s.yield(out_[0]);
  }

 private:
  Kernel k_;
  std::vector<Item> in_, out_;
  std::size_t have_ = 0, pos_ = 0, valid_ = 0;
};

class ComputerInstance final : public Instance {
 public:
  explicit ComputerInstance(std::unique_ptr<ComputerBody> body) : body_(std::move(body)) {}
  void tick(Signal& s) override {
    if (pos_ < out_.size()) return s.yield(out_[pos_++]);
    if (finished_) return s.done(result_);
    if (!have_want_) {
      want_ = body_->need();
      have_want_ = true;
    }
    if (buf_.size() < want_) return s.consume();
    run_step();
    after_step(s);
  }
  void process(Item x, Signal& s) override {
    buf_.push_back(x);
    if (buf_.size() < want_) return s.skip();
    run_step();
    after_step(s);
  }

 private:
  void run_step() {
    out_.clear();
    pos_ = 0;
    finished_ = body_->step(buf_.data(), out_, result_);
    buf_.clear();
    have_want_ = false;
  }
  void after_step(Signal& s) {
    if (pos_ < out_.size()) return s.yield(out_[pos_++]);
    s.skip();
  }
  std::unique_ptr<ComputerBody> body_;
  std::vector<Item> buf_, out_;
  std::size_t pos_ = 0, want_ = 0;
  bool have_want_ = false, finished_ = false;
  Value result_ = 0;
};

class PipeInstance final : public Instance {
 public:
  PipeInstance(std::unique_ptr<Instance> a, std::unique_ptr<Instance> b) : a_(std::move(a)), b_(std::move(b)) {}
  void tick(Signal& s) override {
    if (!b_waiting_) {
      b_->tick(s);
      if (s.kind != Signal::Consume) return;
      b_waiting_ = true;
    }
    a_->tick(s);
    from_upstream(s);
  }
  void process(Item x, Signal& s) override {
    a_->process(x, s);
    from_upstream(s);
  }

 private:
  // Skip, Consume (our input) and Done (the upstream computer finished the pipe) pass through.
  void from_upstream(Signal& s) {
    if (s.kind != Signal::Yield) return;
    b_waiting_ = false;
    b_->process(s.item, s);
  }
  std::unique_ptr<Instance> a_, b_;
  bool b_waiting_ = false;
};

class BindInstance final : public Instance {
 public:
  BindInstance(const Node& n, Env env) : n_(n), env_(std::move(env)), cur_(instantiate(n.a, env_)) {}
  void tick(Signal& s) override {
    cur_->tick(s);
    check(s);
  }
  void process(Item x, Signal& s) override {
    cur_->process(x, s);
    check(s);
  }

 private:
  void check(Signal& s) {
    if (s.kind != Signal::Done || !first_) return;
    first_ = false;
    Env e = n_.var.empty() ? env_ : env_.with(n_.var, s.value(), n_.a.value_type());
    cur_ = instantiate(n_.b, e);
    s.skip();
  }
  const Node& n_;
  Env env_;
  std::unique_ptr<Instance> cur_;
  bool first_ = true;
};

class LoopInstance final : public Instance {
 public:
  LoopInstance(const Node& n, Env env) : n_(n), env_(std::move(env)) {
    if (n.op == Op::Times) limit_ = n.count(env_);
    if (n.op != Op::Times || limit_ > 0) cur_ = instantiate(n.a, env_);
  }
  void tick(Signal& s) override {
    if (!cur_) return s.done(last_);
    cur_->tick(s);
    check(s);
  }
  void process(Item x, Signal& s) override {
    cur_->process(x, s);
    check(s);
  }

 private:
  void check(Signal& s) {
    if (s.kind != Signal::Done) return;
    last_ = s.value();
    if (n_.op == Op::Until && n_.pred(s.value())) return;
    if (n_.op == Op::Times && ++count_ >= limit_) return;
    cur_ = instantiate(n_.a, env_);
    s.skip();
  }
  const Node& n_;
  Env env_;
  std::unique_ptr<Instance> cur_;
  std::int64_t limit_ = 0, count_ = 0;
  Value last_ = 0;
};

}  // namespace

std::unique_ptr<Instance> instantiate(const Comp& c, const Env& env) {
  const Node& n = c.node();
  switch (n.op) {
    case Op::Transformer: return std::make_unique<TransformerInstance>(n.make_kernel(env), n.card);
    case Op::Computer: return std::make_unique<ComputerInstance>(n.make_body(env));
    case Op::Pipe:
    case Op::ParPipe: return std::make_unique<PipeInstance>(instantiate(n.a, env), instantiate(n.b, env));
    case Op::Bind: return std::make_unique<BindInstance>(n, env);
    case Op::Repeat:
    case Op::Times:
    case Op::Until: return std::make_unique<LoopInstance>(n, env);
    case Op::If: return instantiate(n.cond(env) ? n.a : n.b, env);
    case Op::Standalone: return instantiate(n.a, env);
  }
  throw Error("stream program: unknown combinator");
}

}  // namespace korch::streams
