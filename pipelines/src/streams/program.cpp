// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stream program DSL: construction with kind and item type checks (the instances that run a
// program are in program_instances.cpp).
#include <korch/streams/program.hpp>

#include <cstdlib>
#include <memory>
#include <utility>

#if defined(__has_include)
#if __has_include(<cxxabi.h>)
#include <cxxabi.h>
#define KORCH_STREAMS_HAVE_CXXABI 1
#endif
#endif

namespace korch::streams {

std::string demangled_type_name(const std::type_info& t) {
#ifdef KORCH_STREAMS_HAVE_CXXABI
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  if (status == 0 && name) return name.get();
#endif
  return t.name();
}

Instance::~Instance() = default;
ComputerBody::~ComputerBody() = default;

const Env::Var& Env::find(const std::string& name) const {
  for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
    if (it->name == name) return *it;
  }
  std::string bound;
  for (const auto& v : vars_) bound += (bound.empty() ? "" : ", ") + v.name;
  throw Error::format(
      "stream program: variable '{}' is not bound here (bound: {}); bind it with bind(\"{}\", c1, "
      "c2) around the component that reads it",
      name, bound.empty() ? std::string("none") : bound, name);
}

Value Env::at(const std::string& name) const { return find(name).value; }

const ItemType& Env::type(const std::string& name) const { return find(name).type; }

void Env::check_type(const std::string& name, const ItemType& wanted) const {
  const Var& v = find(name);
  if (v.type.compatible(wanted)) return;
  throw Error::format(
      "stream program: variable '{}' holds a {} but is read as {}; read it with get<{}> or make the computer bound "
      "to it finish with {}",
      name, v.type.name(), wanted.name(), v.type.name(), wanted.name());
}

bool Env::has(const std::string& name) const {
  for (const auto& v : vars_) {
    if (v.name == name) return true;
  }
  return false;
}

Env Env::with(const std::string& name, Value value, ItemType type) const {
  Env e = *this;
  e.vars_.push_back({name, value, std::move(type)});
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
const ItemType& Comp::in_type() const { return node().in_type; }
const ItemType& Comp::out_type() const { return node().out_type; }
const ItemType& Comp::value_type() const { return node().value_type; }

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

const ItemType& either(const ItemType& x, const ItemType& y) { return x.any() ? y : x; }

// a's output flows into b's input.
void check_flow(const Comp& a, const Comp& b, const char* combinator) {
  if (a.out_type().compatible(b.in_type())) return;
  throw Error::format(
      "stream program: '{}' {} '{}' does not type-check: '{}' emits {} but '{}' takes {}; put a map from {} to {} "
      "between them or build both with one item type",
      a.name(), combinator, b.name(), a.name(), a.out_type().name(), b.name(), b.in_type().name(), a.out_type().name(),
      b.in_type().name());
}

// a and b read the same input and write the same output (bind's two sides, if's two branches).
void check_alike(const Comp& a, const Comp& b, const char* combinator) {
  const bool in_ok = a.in_type().compatible(b.in_type());
  if (in_ok && a.out_type().compatible(b.out_type())) return;
  const char* side = in_ok ? "emits" : "takes";
  const ItemType& ta = in_ok ? a.out_type() : a.in_type();
  const ItemType& tb = in_ok ? b.out_type() : b.in_type();
  throw Error::format(
      "stream program: {} of '{}' and '{}' does not type-check: '{}' {} {} but '{}' {} {}; both sides share one "
      "input and one output stream, so give them the same item types",
      combinator, a.name(), b.name(), a.name(), side, ta.name(), b.name(), side, tb.name());
}

// a and b finish the same component (if's two branches), so they finish with one type.
void check_same_value(const Comp& a, const Comp& b, const char* combinator) {
  if (a.value_type().compatible(b.value_type())) return;
  throw Error::format(
      "stream program: {} of '{}' and '{}' does not type-check: '{}' finishes with {} but '{}' finishes with {}; "
      "both sides finish the same computer, so make them return one type",
      combinator, a.name(), b.name(), a.name(), a.value_type().name(), b.name(), b.value_type().name());
}

// The continuation of `var <- c1` reads var as the type c1 finishes with.
void check_bound_reads(const std::string& var, const Comp& c1, const Comp& c2) {
  for (const auto& [name, type] : c2.node().reads) {
    if (name != var || type.compatible(c1.value_type())) continue;
    throw Error::format(
        "stream program: bind '{} <- {}' does not type-check: '{}' finishes with {} but the continuation '{}' reads "
        "{} as {}; make '{}' return {} or read {} as {}",
        var, c1.name(), c1.name(), c1.value_type().name(), c2.name(), var, type.name(), c1.name(), type.name(), var,
        c1.value_type().name());
  }
}

// The variables a component expects from an enclosing bind: its children's, less the one it binds.
void add_reads(Node& n, const Comp& c, const std::string& bound = std::string()) {
  for (const auto& r : c.node().reads) {
    if (bound.empty() || r.first != bound) n.reads.push_back(r);
  }
}

void set_types(Node& n, const Comp& first, const Comp& second) {
  n.in_type = either(first.in_type(), second.in_type());
  n.out_type = either(first.out_type(), second.out_type());
}

void copy_types(Node& n, const Comp& c) {
  n.in_type = c.in_type();
  n.out_type = c.out_type();
  n.value_type = c.value_type();
  add_reads(n, c);
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
  n->in_type = n->out_type = ItemType::of<double>();
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
  n->in_type = n->out_type = ItemType::of<double>();
  n->value_type = ItemType::of<std::int64_t>();
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
  return with_types(computer(std::move(name),
                             [v = std::move(v)](const Env& env) -> std::unique_ptr<ComputerBody> {
                               return std::make_unique<RetBody>(v(env));
                             }),
                    ItemType(), ItemType());
}

Comp with_types(const Comp& leaf, ItemType in, ItemType out) {
  require(leaf, "with_types", "leaf");
  if (leaf.node().op != Op::Transformer && leaf.node().op != Op::Computer) {
    throw Error::format(
        "stream program: with_types('{}') got a {}; item types are declared on leaves (transformer, map, computer, "
        "take_block), combinators take theirs from their components",
        leaf.name(), to_string(leaf.node().op));
  }
  auto n = std::make_shared<Node>(leaf.node());
  n->in_type = std::move(in);
  n->out_type = std::move(out);
  return Comp(n);
}

Comp with_value_type(const Comp& leaf, ItemType value) {
  require(leaf, "with_value_type", "leaf");
  if (leaf.node().op != Op::Computer) {
    throw Error::format(
        "stream program: with_value_type('{}') got a {}; value types are declared on leaf computers (computer, "
        "take_block, ret), combinators take theirs from their components",
        leaf.name(), to_string(leaf.node().op));
  }
  auto n = std::make_shared<Node>(leaf.node());
  n->value_type = std::move(value);
  return Comp(n);
}

Comp expects(const Comp& c, const std::string& var, ItemType type) {
  require(c, "expects", "component");
  if (var.empty()) throw Error::format("stream program: expects('{}') got an empty variable name", c.name());
  auto n = std::make_shared<Node>(c.node());
  n->reads.emplace_back(var, std::move(type));
  return Comp(n);
}

namespace {

// a >>> b or a |>>>| b (`symbol`): a's input, b's output, the computer's value; a parallel pipe is
// a barrier of its own.
Comp make_pipe(Op op, const char* symbol, Comp a, Comp b) {
  require(a, symbol, "upstream");
  require(b, symbol, "downstream");
  if (a.is_computer() && b.is_computer()) {
    throw Error::format("stream program: '{}' {} '{}' pipes two computers; at most one side of a pipe may finish",
                        a.name(), symbol, b.name());
  }
  check_flow(a, b, symbol);
  auto n = make_node(op, a.name() + symbol + b.name());
  n->in_type = a.in_type();
  n->out_type = b.out_type();
  n->computer = a.is_computer() || b.is_computer();
  n->value_type = a.is_computer() ? a.value_type() : b.value_type();
  add_reads(*n, a);
  add_reads(*n, b);
  n->barrier = op == Op::ParPipe || a.has_barrier() || b.has_barrier();
  n->a = std::move(a);
  n->b = std::move(b);
  return Comp(n);
}

}  // namespace

Comp pipe(Comp a, Comp b) { return make_pipe(Op::Pipe, ">>>", std::move(a), std::move(b)); }

Comp par_pipe(Comp a, Comp b) { return make_pipe(Op::ParPipe, "|>>>|", std::move(a), std::move(b)); }

Comp bind(std::string var, Comp c1, Comp c2) {
  require(c1, "bind", "first component");
  require(c2, "bind", "continuation");
  if (!c1.is_computer()) {
    throw Error::format("stream program: bind '{} <- {}' binds a transformer, which never finishes; bind a computer",
                        var, c1.name());
  }
  check_alike(c1, c2, var.empty() ? "seq" : "bind");
  if (!var.empty()) check_bound_reads(var, c1, c2);
  auto n = make_node(Op::Bind, var.empty() ? c1.name() + ";" + c2.name() : var + "<-" + c1.name() + ";" + c2.name());
  set_types(*n, c1, c2);
  n->computer = c2.is_computer();
  n->value_type = c2.value_type();
  add_reads(*n, c1);
  add_reads(*n, c2, var);
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
  copy_types(*n, body);
  n->value_type = ItemType();  // a repeat never finishes
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
  copy_types(*n, body);
  n->computer = true;
  n->barrier = body.has_barrier();
  n->count = std::move(count);
  n->a = std::move(body);
  return Comp(n);
}
Comp times(std::int64_t count, Comp body) {
  return times([count](const Env&) { return count; }, std::move(body));
}

Comp until(std::function<bool(Value)> pred, Comp body) {
  require(body, "until", "body");
  if (!body.is_computer()) {
    throw Error::format("stream program: until '{}': the body is a transformer; until needs a computer", body.name());
  }
  auto n = make_node(Op::Until, "until(" + body.name() + ")");
  copy_types(*n, body);
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
  check_alike(then_branch, else_branch, "if");
  check_same_value(then_branch, else_branch, "if");
  auto n = make_node(Op::If, "if(" + then_branch.name() + "," + else_branch.name() + ")");
  set_types(*n, then_branch, else_branch);
  n->computer = then_branch.is_computer();
  n->value_type = then_branch.value_type().any() ? else_branch.value_type() : then_branch.value_type();
  add_reads(*n, then_branch);
  add_reads(*n, else_branch);
  n->barrier = then_branch.has_barrier() || else_branch.has_barrier();
  n->cond = std::move(cond);
  n->a = std::move(then_branch);
  n->b = std::move(else_branch);
  return Comp(n);
}

Comp standalone(Comp c) {
  require(c, "standalone", "component");
  auto n = make_node(Op::Standalone, "standalone(" + c.name() + ")");
  copy_types(*n, c);
  n->computer = c.is_computer();
  n->barrier = true;
  n->a = std::move(c);
  return Comp(n);
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
