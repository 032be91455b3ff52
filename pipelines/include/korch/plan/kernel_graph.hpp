// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The annotated kernel graph of an operation (docs/planner.md, "The kernel graph"): one node per
// action, an edge for every read-after-write, write-after-read and write-after-write dependence
// on a variable (from the declarations, earlier action to later), marked as a barrier where either
// side reads the variable with a stencil (a stencil read after a write needs a guard-cell fill in
// between; a stencil read before a write must finish on every item first). Barriers of the
// operation whose "unless" condition holds are removed; each action lies in an epoch, the number of
// remaining barriers before it.
#pragma once

#include <korch/plan/operation.hpp>

#include <string>
#include <unordered_map>
#include <vector>

namespace korch::plan {

enum class DependenceKind { raw, war, waw };
const char* to_string(DependenceKind kind) noexcept;

struct Dependence {
  int from = 0;  // action indices, from < to (program order)
  int to = 0;
  DependenceKind kind = DependenceKind::raw;
  std::string variable;
  bool barrier = false;     // the two actions may not share a bundle
  bool guard_fill = false;  // a stencil read after a write: fill the variable's guard cells between
};

struct GraphBarrier {
  Barrier barrier;
  int after_action = -1;  // the barrier follows this many actions (its position in program order)
  bool removed = false;   // its condition held
};

class KernelGraph {
 public:
  // Evaluates the barriers' conditions with the operation's parameters.
  explicit KernelGraph(const Operation& operation);

  const Operation& operation() const noexcept { return operation_; }
  const std::vector<ActionDeclaration>& actions() const noexcept { return actions_; }
  const std::vector<Dependence>& dependences() const noexcept { return dependences_; }
  const std::vector<GraphBarrier>& barriers() const noexcept { return barriers_; }
  int epoch(int action) const { return epochs_.at(static_cast<std::size_t>(action)); }
  // Dependences into `action` (indices into dependences()).
  const std::vector<int>& into(int action) const { return into_.at(static_cast<std::size_t>(action)); }
  int find(const std::string& action) const noexcept;  // -1 when unknown

  std::string to_json() const;
  std::string to_dot() const;

 private:
  Operation operation_;
  std::vector<ActionDeclaration> actions_;
  std::vector<Dependence> dependences_;
  std::vector<GraphBarrier> barriers_;
  std::vector<int> epochs_;
  std::vector<std::vector<int>> into_;
  std::unordered_map<std::string, int> index_;  // find() in constant time: layouts look actions up by name
};

}  // namespace korch::plan
