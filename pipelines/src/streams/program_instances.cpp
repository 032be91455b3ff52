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
  Signal tick() override {
    if (pos_ < valid_) return Signal::yield(out_[pos_++]);
    return Signal::consume();
  }
  Signal process(Item x) override {
    in_[have_++] = x;
    if (have_ < in_.size()) return Signal::skip();
    have_ = 0;
    k_(in_.data(), out_.data());
    valid_ = out_.size();
    pos_ = 1;
    return Signal::yield(out_[0]);
  }

 private:
  Kernel k_;
  std::vector<Item> in_, out_;
  std::size_t have_ = 0, pos_ = 0, valid_ = 0;
};

class ComputerInstance final : public Instance {
 public:
  explicit ComputerInstance(std::unique_ptr<ComputerBody> body) : body_(std::move(body)) {}
  Signal tick() override {
    if (pos_ < out_.size()) return Signal::yield(out_[pos_++]);
    if (finished_) return Signal::done(result_);
    if (!have_want_) {
      want_ = body_->need();
      have_want_ = true;
    }
    if (buf_.size() < want_) return Signal::consume();
    run_step();
    return after_step();
  }
  Signal process(Item x) override {
    buf_.push_back(x);
    if (buf_.size() < want_) return Signal::skip();
    run_step();
    return after_step();
  }

 private:
  void run_step() {
    out_.clear();
    pos_ = 0;
    finished_ = body_->step(buf_.data(), out_, result_);
    buf_.clear();
    have_want_ = false;
  }
  Signal after_step() {
    if (pos_ < out_.size()) return Signal::yield(out_[pos_++]);
    return Signal::skip();
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
  Signal tick() override {
    if (!b_waiting_) {
      Signal s = b_->tick();
      if (s.kind != Signal::Consume) return s;
      b_waiting_ = true;
    }
    return from_upstream(a_->tick());
  }
  Signal process(Item x) override { return from_upstream(a_->process(x)); }

 private:
  Signal from_upstream(Signal s) {
    if (s.kind == Signal::Yield) {
      b_waiting_ = false;
      return b_->process(s.item);
    }
    return s;  // Skip, Consume (our input) or Done (the upstream computer finished the pipe)
  }
  std::unique_ptr<Instance> a_, b_;
  bool b_waiting_ = false;
};

class BindInstance final : public Instance {
 public:
  BindInstance(const Node& n, Env env) : n_(n), env_(std::move(env)), cur_(instantiate(n.a, env_)) {}
  Signal tick() override { return check(cur_->tick()); }
  Signal process(Item x) override { return check(cur_->process(x)); }

 private:
  Signal check(Signal s) {
    if (s.kind == Signal::Done && first_) {
      first_ = false;
      Env e = n_.var.empty() ? env_ : env_.with(n_.var, s.value);
      cur_ = instantiate(n_.b, e);
      return Signal::skip();
    }
    return s;
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
  Signal tick() override {
    if (!cur_) return Signal::done(last_);
    return check(cur_->tick());
  }
  Signal process(Item x) override { return check(cur_->process(x)); }

 private:
  Signal check(Signal s) {
    if (s.kind != Signal::Done) return s;
    last_ = s.value;
    if (n_.op == Op::Until && n_.pred(s.value)) return s;
    if (n_.op == Op::Times && ++count_ >= limit_) return s;
    cur_ = instantiate(n_.a, env_);
    return Signal::skip();
  }
  const Node& n_;
  Env env_;
  std::unique_ptr<Instance> cur_;
  Value limit_ = 0, count_ = 0, last_ = 0;
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
