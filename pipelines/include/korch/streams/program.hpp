// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Stream programs: Ziria-style components and combinators as a C++ embedded DSL.
//
// A program reads one input stream and writes one output stream of `Item`s. Components are
//   transformers - run forever; a leaf transformer declares its cardinality n/m (per round it
//                  consumes n items and emits m), and
//   computers    - take and emit some items, then finish with a `Value`.
// Combinators (the Ziria name on the left):
//   a >>> b        pipe(a, b)        or  a >> b    at most one side a computer; the pipe is a
//                                                    computer iff one side is, finishing with it
//   a |>>>| b      par_pipe(a, b)    or  a | b     the same, but a and b run as separate tasks
//   x <- c1 ; c2   bind("x", c1, c2)                 c2's leaves read x from their Env
//   c1 ; c2        seq(c1, c2)
//   repeat c       repeat(c)                         restarts c whenever it finishes normally
//   times n c      times(n, c)                       n read from the Env when the loop starts
//   until p c      until(p, c)                       runs c until p(c's value) holds
//   if e a b       if_(e, a, b)
//   standalone c   standalone(c)                     c runs in its own task, on its own thread if any
// Note C++ precedence: `>>` binds tighter than `|`, so `t | c1 >> c2` is `t |>>>| (c1 >>> c2)`.
//
// Items are cells (korch/streams/item.hpp) that hold any trivially copyable type of up to 16 bytes;
// every leaf records the ItemType it takes and the one it emits (the untyped leaves below take and
// emit double, ret neither), and every combinator checks that the components it joins agree,
// throwing korch::Error that names both components and both types. The typed facade
// (korch/streams/typed.hpp) moves that check to compile time.
//
// Computers finish with a `Value` (korch/streams/value.hpp), a cell like an item: std::int64_t for
// the untyped leaves, any other item-sized type where a leaf declares it (with_value_type). Values
// reach later components only through bind and the Env, which keeps the program's structure static,
// so the execution map and plan can be built before the program runs. A component declares the
// variables it reads and their types (expects); bind checks them against what its first component
// returns, and Env::get<T> checks each read at run time.
//
// Every program instance executes through the tick/process interface: tick(s)
// either yields an item, skips (call tick again), asks to consume an input, or is done with a value;
// process(x, s) receives the input asked for. The sequential interpreter (the reference semantics) and
// the tasks of the parallel executor drive the very same instances.
#pragma once

#include <korch/error.hpp>
#include <korch/streams/cardinality.hpp>
#include <korch/streams/item.hpp>
#include <korch/streams/value.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace korch::streams {

// The values bound so far (bind's variables) with their types, innermost last.
class Env {
 public:
  Value at(const std::string& name) const;  // the raw cell; throws korch::Error naming the variable
  const ItemType& type(const std::string& name) const;
  // The value as a T; throws korch::Error naming the variable and both types when it holds another.
  template <class T>
  T get(const std::string& name) const {
    check_type(name, value_type_of<T>());
    return at(name).template as<T>();
  }
  bool has(const std::string& name) const;
  Env with(const std::string& name, Value value, ItemType type = ItemType::of<std::int64_t>()) const;

 private:
  struct Var {
    std::string name;
    Value value;
    ItemType type;
  };
  const Var& find(const std::string& name) const;
  void check_type(const std::string& name, const ItemType& wanted) const;
  std::vector<Var> vars_;
};

// ---- the tick/process interface ----
// The answer of a tick or process, written in place by the instance: nested instances pass one
// Signal down instead of returning copies (a copy of a 16-byte cell that the callee just stored
// in pieces stalls the load; see docs/streams.md).
// A finished computer's value shares the item's cell (an answer is never both), which keeps a
// Signal at 32 bytes.
struct Signal {
  enum Kind { Yield, Skip, Consume, Done };
  Item item{};  // Yield: the item; Done: the value's bytes
  Kind kind = Skip;
  void yield(Item x) {
    item = x;
    kind = Yield;
  }
  void skip() { kind = Skip; }
  void consume() { kind = Consume; }
  void done(Value v) {
    item = Item::of(v);
    kind = Done;
  }
  Value value() const { return item.as<Value>(); }  // Done
};
static_assert(sizeof(Signal) == 32, "a Signal is an item cell and a kind");

// One activation of a component: ticked, or given the input it asked for. Both answer in `s`.
class Instance {
 public:
  virtual ~Instance();
  virtual void tick(Signal& s) = 0;             // never called while a Consume awaits its process()
  virtual void process(Item x, Signal& s) = 0;  // answers a Consume with Yield, Skip or Done
};

// ---- leaves ----
// A transformer round: reads in[0..n), writes out[0..m).
using Kernel = std::function<void(const Item* in, Item* out)>;
// A computer's body, one per activation: need() says how many inputs the next step takes (0 is
// allowed); step() gets exactly that many, appends what it emits to `out` and returns true when the
// computer is finished, with `result` set.
class ComputerBody {
 public:
  virtual ~ComputerBody();
  virtual std::size_t need() = 0;
  virtual bool step(const Item* in, std::vector<Item>& out, Value& result) = 0;
};

enum class Op { Transformer, Computer, Pipe, ParPipe, Bind, Repeat, Times, Until, If, Standalone };
const char* to_string(Op op) noexcept;

struct Node;
// A program (or component): an immutable tree, cheap to copy and share.
class Comp {
 public:
  Comp() = default;
  explicit Comp(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  const Node& node() const;
  const std::shared_ptr<const Node>& ptr() const noexcept { return node_; }
  bool is_computer() const;
  bool has_barrier() const;  // contains |>>>| or standalone
  const std::string& name() const;
  const ItemType& in_type() const;     // what it takes (any: takes nothing, or left open)
  const ItemType& out_type() const;    // what it emits
  const ItemType& value_type() const;  // what it finishes with (any: a transformer)
  // The chain's cardinalities when this is a leaf transformer or a pipe of them; nullopt otherwise.
  std::optional<Cards> cards() const;
  explicit operator bool() const noexcept { return node_ != nullptr; }

 private:
  std::shared_ptr<const Node> node_;
};

struct Node {
  Op op;
  std::string name;
  bool computer = false;
  bool barrier = false;
  ItemType in_type, out_type;                                          // see Comp::in_type
  ItemType value_type;                                                 // see Comp::value_type
  std::vector<std::pair<std::string, ItemType>> reads;                 // expected variables, unbound here
  Cardinality card{};                                                  // Transformer
  std::function<Kernel(const Env&)> make_kernel;                       // Transformer
  std::function<std::unique_ptr<ComputerBody>(const Env&)> make_body;  // Computer
  Comp a, b;                                                           // children
  std::string var;                                                     // Bind
  std::function<Value(const Env&)> count;                              // Times
  std::function<bool(Value)> pred;                                     // Until
  std::function<bool(const Env&)> cond;                                // If
};

// Leaf transformer with state: make(env) returns the round function of one activation.
Comp transformer(std::string name, Cardinality card, std::function<Kernel(const Env&)> make);
// Stateless leaf transformer.
Comp map(std::string name, Cardinality card, Kernel kernel);
// Leaf computer: make(env) returns the body of one activation.
Comp computer(std::string name, std::function<std::unique_ptr<ComputerBody>(const Env&)> make);
// Computer that takes n(env) items, emits f's output and returns f's value:
// f(in, n, out) -> Value.
Comp take_block(std::string name, std::function<std::size_t(const Env&)> n,
                std::function<Value(const Item*, std::size_t, std::vector<Item>&)> f);
// Computer that emits nothing, takes nothing and returns v(env); its item types are any.
Comp ret(std::string name, std::function<Value(const Env&)> v);
// The leaves above take and emit double; this copy of a leaf (transformer or computer) declares
// other item types instead. Its kernel or body then reads and writes cells holding those types.
Comp with_types(const Comp& leaf, ItemType in, ItemType out);
// The leaf computers above finish with std::int64_t; this copy of a leaf computer declares that it
// finishes with another type (its body stores Value::of(x) in `result`).
Comp with_value_type(const Comp& leaf, ItemType value);
// This copy of `c` declares that it reads variable `var` as `type`; an enclosing bind of `var` checks
// that its first component finishes with that type.
Comp expects(const Comp& c, const std::string& var, ItemType type);

Comp pipe(Comp a, Comp b);
Comp par_pipe(Comp a, Comp b);
Comp bind(std::string var, Comp c1, Comp c2);
Comp seq(Comp c1, Comp c2);
Comp repeat(Comp body);
Comp times(std::function<Value(const Env&)> n, Comp body);
Comp times(std::int64_t n, Comp body);
Comp until(std::function<bool(Value)> pred, Comp body);
Comp if_(std::function<bool(const Env&)> cond, Comp then_branch, Comp else_branch);
Comp standalone(Comp c);

inline Comp operator>>(Comp a, Comp b) { return pipe(std::move(a), std::move(b)); }
inline Comp operator|(Comp a, Comp b) { return par_pipe(std::move(a), std::move(b)); }

// One activation of `c` (|>>>| runs as >>>, standalone as its child): the reference semantics.
std::unique_ptr<Instance> instantiate(const Comp& c, const Env& env);

// Text form of the program tree, e.g. "bind x (par_pipe t c1) c2".
std::string to_string(const Comp& c);

}  // namespace korch::streams
