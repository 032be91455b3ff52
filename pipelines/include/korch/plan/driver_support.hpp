// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What generated drivers call (docs/planner.md, "Generated drivers"): a check of the registry and
// the source before anything runs, the routine of a stage from registered bodies, and the work
// between bundles through the registry's hooks. Each throws korch::Error naming the operation and
// what is missing.
#pragma once

#include <korch/block_iterator.hpp>
#include <korch/bundle.hpp>
#include <korch/configuration.hpp>
#include <korch/data_source.hpp>
#include <korch/plan/action_registry.hpp>
#include <korch/runtime.hpp>

#include <initializer_list>
#include <string>
#include <vector>

namespace korch::plan::driver {

// Every action registered; the source holds `n_vars` variables, at least `widest_stencil` guard
// cells, and is of every level an action's iterator names.
void check(const ActionRegistry& registry, const DataSource& source, const char* operation,
           std::initializer_list<const char*> actions, int n_vars, int widest_stencil,
           std::initializer_list<int> levels);

// The stage routine `name` over the registered bodies of `actions`, declared as the JSON says.
ActionRoutine routine(const ActionRegistry& registry, DataSource& source, const char* name,
                      const char* declaration_json, std::initializer_list<const char*> actions);

void fill_guards(const ActionRegistry& registry, DataSource& source, const char* operation,
                 const std::vector<int>& variables);

// The plan's guard fills as the Executor does them (docs/planner.md, "Execution"): with the
// registry's hooks.filling_order, a fill directly before a bundle runs inside that bundle's cycle
// (the hook's block order); otherwise, and before a reduction or at the end, through hooks.fill_guards.
class PendingFills {
 public:
  // A guard_fill step: done now without hooks.filling_order, else kept for the next bundle.
  void fill_guards(const ActionRegistry& registry, DataSource& source, const char* operation,
                   const std::vector<int>& variables);
  // The block order for bundle `bundle`'s cycle: null when no fill waits, else hooks.filling_order's
  // (an error naming the bundle when it gives none).
  BlockIterator* order(const ActionRegistry& registry, DataSource& source, const char* operation, const char* bundle);
  // The waiting fill done now, through hooks.fill_guards (before a reduction, at the end).
  void flush(const ActionRegistry& registry, DataSource& source, const char* operation);

 private:
  std::vector<int> variables_;
};
void reduce(const ActionRegistry& registry, DataSource& source, const char* operation, const char* name,
            const std::vector<int>& variables);

}  // namespace korch::plan::driver
