// What generated drivers call (docs/planner.md, "Generated drivers"): a check of the registry and
// the grid before anything runs, the routine of a stage from registered bodies, and the work
// between bundles through the registry's hooks. Each throws korch::Error naming the operation and
// what is missing.
#pragma once

#include <korch/bundle.hpp>
#include <korch/configuration.hpp>
#include <korch/grid.hpp>
#include <korch/plan/action_registry.hpp>
#include <korch/runtime.hpp>

#include <initializer_list>
#include <string>
#include <vector>

namespace korch::plan::driver {

// Every action registered; the grid holds `n_vars` variables, at least `widest_stencil` guard
// cells, and is of every level an action's iterator names.
void check(const ActionRegistry& registry, const Grid& grid, const char* operation, std::initializer_list<const char*> actions,
           int n_vars, int widest_stencil, std::initializer_list<int> levels);

// The stage routine `name` over the registered bodies of `actions`, declared as the JSON says.
ActionRoutine routine(const ActionRegistry& registry, Grid& grid, const char* name, const char* declaration_json,
                      std::initializer_list<const char*> actions);

void fill_guards(const ActionRegistry& registry, Grid& grid, const char* operation, const std::vector<int>& variables);
void reduce(const ActionRegistry& registry, Grid& grid, const char* operation, const char* name,
            const std::vector<int>& variables);

}  // namespace korch::plan::driver
