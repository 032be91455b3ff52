// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stream program DSL: construction with kind checks, and the tick/process instances (the
// reference semantics shared by the sequential interpreter and the parallel executor's tasks).
#include <korch/streams/program.hpp>

#include <utility>

namespace korch::streams {

Instance::~Instance() = default;
ComputerBody::~ComputerBody() = default;

Value Env::at(const std::string& name) const {
  for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  std::string bound;
  for (const auto& v : vars_) bound += (bound.empty() ? "" : ", ") + v.first;
  throw Error::format(
      "stream program: variable '{}' is not bound here (bound: {}); bind it with bind(\"{}\", c1, "
      "c2) around the component that reads it",
      name, bound.empty() ? std::string("none") : bound, name);
}
bool Env::has(const std::string& name) const {
  for (const auto& v : vars_) {
    if (v.first == name) return true;
  }
  return false;
}
Env Env::with(const std::string& name, Value value) const {
  Env e = *this;
  e.vars_.emplace_back(name, value);
  return e;
}

const char* to_string(Op op) noexcept {
  switch (op) {
    case Op::Transformer: return "transformer";
    case Op::Computer: return "computer";
    case Op::Pipe: return "pipe";
    case Op::ParPipe: return "par_pipe";
    case Op::Bind: return "bind";
    case Op::Repeat: return "repeat";
    case Op::Times: return "times";
    case Op::Until: return "until";
    case Op::If: return "if";
    case Op::Standalone: return "standalone";
  }
  return "?";
}

const Node& Comp::node() const {
  if (!node_) throw Error("stream program: empty component (default-constructed Comp); build it with the DSL");
  return *node_;
}
bool Comp::is_computer() const { return node().computer; }
bool Comp::has_barrier() const { return node().barrier; }
const std::string& Comp::name() const { return node().name; }

std::optional<Cards> Comp::cards() const {
  const Node& n = node();
  switch (n.op) {
    case Op::Transformer: return Cards{n.card};
    case Op::Pipe:
    case Op::ParPipe: {
      auto l = n.a.cards();
      auto r = n.b.cards();
      if (!l || !r) return std::nullopt;
      l->insert(l->end(), r->begin(), r->end());
      return l;
    }
    case Op::Standalone: return n.a.cards();
    default: return std::nullopt;
  }
}

namespace {

std::shared_ptr<Node> make_node(Op op, std::string name) {
  auto n = std::make_shared<Node>();
  n->op = op;
  n->name = std::move(name);
  return n;
}

void require(const Comp& c, const char* combinator, const char* role) {
  if (!c)
    throw Error::format("stream program: {} got an empty {}; pass a component built with the DSL", combinator, role);
}

}  // namespace

Comp transformer(std::string name, Cardinality card, std::function<Kernel(const Env&)> make) {
  if (card.in == 0 || card.out == 0) {
    throw Error::format(
        "transformer '{}': cardinality {}/{} has a zero side; a round must consume and emit at least one item", name,
        card.in, card.out);
  }
  if (!make) throw Error::format("transformer '{}': no kernel factory", name);
  auto n = make_node(Op::Transformer, std::move(name));
  n->card = card;
  n->make_kernel = std::move(make);
  return Comp(n);
}

Comp map(std::string name, Cardinality card, Kernel kernel) {
  if (!kernel) throw Error::format("transformer '{}': no kernel", name);
  return transformer(std::move(name), card, [kernel = std::move(kernel)](const Env&) { return kernel; });
}

Comp computer(std::string name, std::function<std::unique_ptr<ComputerBody>(const Env&)> make) {
  if (!make) throw Error::format("computer '{}': no body factory", name);
  auto n = make_node(Op::Computer, std::move(name));
  n->computer = true;
  n->make_body = std::move(make);
  return Comp(n);
}

namespace {
class TakeBlockBody : public ComputerBody {
 public:
  TakeBlockBody(std::size_t n, const std::function<Value(const Item*, std::size_t, std::vector<Item>&)>* f)
      : n_(n), f_(f) {}
  std::size_t need() override { return n_; }
  bool step(const Item* in, std::vector<Item>& out, Value& result) override {
    result = (*f_)(in, n_, out);
    return true;
  }

 private:
  std::size_t n_;
  const std::function<Value(const Item*, std::size_t, std::vector<Item>&)>* f_;
};
}  // namespace

Comp take_block(std::string name, std::function<std::size_t(const Env&)> n,
                std::function<Value(const Item*, std::size_t, std::vector<Item>&)> f) {
  auto shared = std::make_shared<std::function<Value(const Item*, std::size_t, std::vector<Item>&)>>(std::move(f));
  return computer(std::move(name), [n = std::move(n), shared](const Env& env) -> std::unique_ptr<ComputerBody> {
    // `shared` lives in the program tree, which outlives every activation.
    return std::make_unique<TakeBlockBody>(n(env), shared.get());
  });
}

namespace {
class RetBody : public ComputerBody {
 public:
  explicit RetBody(Value v) : v_(v) {}
  std::size_t need() override { return 0; }
  bool step(const Item*, std::vector<Item>&, Value& result) override {
    result = v_;
    return true;
  }

 private:
  Value v_;
};
}  // namespace

Comp ret(std::string name, std::function<Value(const Env&)> v) {
  if (!v) throw Error::format("computer '{}': no value function", name);
  return computer(std::move(name), [v = std::move(v)](const Env& env) -> std::unique_ptr<ComputerBody> {
    return std::make_unique<RetBody>(v(env));
  });
}

Comp pipe(Comp a, Comp b) {
  require(a, ">>>", "upstream");
  require(b, ">>>", "downstream");
  if (a.is_computer() && b.is_computer()) {
    throw Error::format("stream program: '{}' >>> '{}' pipes two computers; at most one side of a pipe may finish",
                        a.name(), b.name());
  }
  auto n = make_node(Op::Pipe, a.name() + ">>>" + b.name());
  n->computer = a.is_computer() || b.is_computer();
  n->barrier = a.has_barrier() || b.has_barrier();
  n->a = std::move(a);
  n->b = std::move(b);
  return Comp(n);
}

Comp par_pipe(Comp a, Comp b) {
  require(a, "|>>>|", "upstream");
  require(b, "|>>>|", "downstream");
  if (a.is_computer() && b.is_computer()) {
    throw Error::format("stream program: '{}' |>>>| '{}' pipes two computers; at most one side of a pipe may finish",
                        a.name(), b.name());
  }
  auto n = make_node(Op::ParPipe, a.name() + "|>>>|" + b.name());
  n->computer = a.is_computer() || b.is_computer();
  n->barrier = true;
  n->a = std::move(a);
  n->b = std::move(b);
  return Comp(n);
}

Comp bind(std::string var, Comp c1, Comp c2) {
  require(c1, "bind", "first component");
  require(c2, "bind", "continuation");
  if (!c1.is_computer()) {
    throw Error::format("stream program: bind '{} <- {}' binds a transformer, which never finishes; bind a computer",
                        var, c1.name());
  }
  auto n = make_node(Op::Bind, var.empty() ? c1.name() + ";" + c2.name() : var + "<-" + c1.name() + ";" + c2.name());
  n->computer = c2.is_computer();
  n->barrier = c1.has_barrier() || c2.has_barrier();
  n->var = std::move(var);
  n->a = std::move(c1);
  n->b = std::move(c2);
  return Comp(n);
}

Comp seq(Comp c1, Comp c2) { return bind("", std::move(c1), std::move(c2)); }

Comp repeat(Comp body) {
  require(body, "repeat", "body");
  if (!body.is_computer()) {
    throw Error::format(
        "stream program: repeat '{}': the body is a transformer, which never finishes; repeat a computer", body.name());
  }
  auto n = make_node(Op::Repeat, "repeat(" + body.name() + ")");
  n->barrier = body.has_barrier();
  n->a = std::move(body);
  return Comp(n);
}

Comp times(std::function<Value(const Env&)> count, Comp body) {
  require(body, "times", "body");
  if (!body.is_computer()) {
    throw Error::format("stream program: times '{}': the body is a transformer; times needs a computer", body.name());
  }
  auto n = make_node(Op::Times, "times(" + body.name() + ")");
  n->computer = true;
  n->barrier = body.has_barrier();
  n->count = std::move(count);
  n->a = std::move(body);
  return Comp(n);
}
Comp times(Value count, Comp body) {
  return times([count](const Env&) { return count; }, std::move(body));
}

Comp until(std::function<bool(Value)> pred, Comp body) {
  require(body, "until", "body");
  if (!body.is_computer()) {
    throw Error::format("stream program: until '{}': the body is a transformer; until needs a computer", body.name());
  }
  auto n = make_node(Op::Until, "until(" + body.name() + ")");
  n->computer = true;
  n->barrier = body.has_barrier();
  n->pred = std::move(pred);
  n->a = std::move(body);
  return Comp(n);
}

Comp if_(std::function<bool(const Env&)> cond, Comp then_branch, Comp else_branch) {
  require(then_branch, "if", "then branch");
  require(else_branch, "if", "else branch");
  if (then_branch.is_computer() != else_branch.is_computer()) {
    throw Error::format("stream program: if: branch '{}' is a {} but '{}' is a {}; both branches must be of one kind",
                        then_branch.name(), then_branch.is_computer() ? "computer" : "transformer", else_branch.name(),
                        else_branch.is_computer() ? "computer" : "transformer");
  }
  auto n = make_node(Op::If, "if(" + then_branch.name() + "," + else_branch.name() + ")");
  n->computer = then_branch.is_computer();
  n->barrier = then_branch.has_barrier() || else_branch.has_barrier();
  n->cond = std::move(cond);
  n->a = std::move(then_branch);
  n->b = std::move(else_branch);
  return Comp(n);
}

Comp standalone(Comp c) {
  require(c, "standalone", "component");
  auto n = make_node(Op::Standalone, "standalone(" + c.name() + ")");
  n->computer = c.is_computer();
  n->barrier = true;
  n->a = std::move(c);
  return Comp(n);
}

// ------------------------------------------------------------------------------------------------
// tick/process instances
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

std::string to_string(const Comp& c) {
  const Node& n = c.node();
  switch (n.op) {
    case Op::Transformer: return fmt::format("{}({}/{})", n.name, n.card.in, n.card.out);
    case Op::Computer: return n.name;
    case Op::Pipe: return "(" + to_string(n.a) + " >>> " + to_string(n.b) + ")";
    case Op::ParPipe: return "(" + to_string(n.a) + " |>>>| " + to_string(n.b) + ")";
    case Op::Bind:
      return "(" + (n.var.empty() ? std::string() : n.var + " <- ") + to_string(n.a) + " ; " + to_string(n.b) + ")";
    case Op::Repeat: return "repeat " + to_string(n.a);
    case Op::Times: return "times " + to_string(n.a);
    case Op::Until: return "until " + to_string(n.a);
    case Op::If: return "if(" + to_string(n.a) + ", " + to_string(n.b) + ")";
    case Op::Standalone: return "standalone " + to_string(n.a);
  }
  return "?";
}

}  // namespace korch::streams
