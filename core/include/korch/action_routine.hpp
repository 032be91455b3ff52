// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// An action routine: the one code interface every routine run by a thread team has, plus a name so
// that errors and traces can say which routine was running.
//
// What a team hands to its work subscriber after the routine ran on an item (docs/thread-team.md,
// "Outputs"): by default the item itself. A routine made with `emitting` instead hands on the items
// it gives to ActionContext::emit (none, one or many per input; splitters and aggregators), and may
// have an end-of-cycle step that runs once per cycle in which the routine processed an item, after
// the last item, on a team thread, and may emit too (an aggregator's last, partial packet); it is
// skipped when the cycle failed. Every node of a runtime cycle hands items on
// this one way, through its team's work subscription.
//
// A routine may carry its ActionDeclaration (what it reads and writes): declarations travel with
// the routine rather than beside the Bundle, so that every copy and wrapper of a routine keeps it and
// the cycle can check a bundle's action-parallel pipelines (docs/planner.md).
#pragma once

#include <korch/action_declaration.hpp>

#include <korch/action_context.hpp>
#include <korch/data_item.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace korch {

class ActionRoutine {
 public:
  using Function = std::function<void(const ActionContext&, DataItem&)>;
  using EndOfCycle = std::function<void(const ActionContext&)>;

  ActionRoutine() = default;  // empty: start_cycle rejects it
  // A routine whose output is the item it was given.
  ActionRoutine(std::string name, Function function)
      : state_(std::make_shared<const State>(State{std::move(name), std::move(function), false, {}, {}})) {}
  // A routine whose outputs are the items it emits; `end_of_cycle` may be empty.
  static ActionRoutine emitting(std::string name, Function function, EndOfCycle end_of_cycle = {}) {
    ActionRoutine r;
    r.state_ =
        std::make_shared<const State>(State{std::move(name), std::move(function), true, std::move(end_of_cycle), {}});
    return r;
  }
  // The same kind of routine (outputs and end-of-cycle step kept) under another function, for
  // wrappers that record or time each call.
  ActionRoutine wrapped(Function function) const {
    ActionRoutine r;
    r.state_ =
        std::make_shared<const State>(State{name(), std::move(function), emits(), state_ ? state_->end : EndOfCycle{},
                                            state_ ? state_->declaration : nullptr});
    return r;
  }

  // The same routine carrying `declaration` (its action name must be this routine's name; checked
  // with ActionDeclaration::check). Throws korch::Error naming both names otherwise.
  ActionRoutine declared(ActionDeclaration declaration) const;
  // The routine's declaration, or nullptr when it declares nothing (then nothing is checked).
  const ActionDeclaration* declaration() const noexcept { return state_ ? state_->declaration.get() : nullptr; }

  const std::string& name() const noexcept { return state_ ? state_->name : no_name(); }
  explicit operator bool() const noexcept { return state_ && state_->function; }
  bool emits() const noexcept { return state_ && state_->emits; }
  bool has_end_of_cycle() const noexcept { return state_ && state_->end; }

  void operator()(const ActionContext& context, DataItem& item) const { state_->function(context, item); }
  void end_of_cycle(const ActionContext& context) const {
    if (has_end_of_cycle()) state_->end(context);
  }

 private:
  // Shared by the copies, so that handing a routine to start_cycle every cycle copies a pointer.
  struct State {
    std::string name;
    Function function;
    bool emits;
    EndOfCycle end;
    std::shared_ptr<const ActionDeclaration> declaration;
  };
  static const std::string& no_name() {
    static const std::string empty;
    return empty;
  }
  std::shared_ptr<const State> state_;
};

}  // namespace korch
