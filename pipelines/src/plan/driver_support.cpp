// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/plan/driver_support.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace korch::plan::driver {

void check(const ActionRegistry& registry, const DataSource& source, const char* operation,
           std::initializer_list<const char*> actions, int n_vars, int widest_stencil,
           std::initializer_list<int> levels) {
  for (const char* a : actions)
    if (!registry.has(a)) {
      throw Error::format(
          "driver of operation '{}': action '{}' has no body in the registry: register it before running "
          "the driver",
          operation, a);
    }
  if (source.n_vars() < n_vars) {
    throw Error::format(
        "driver of operation '{}': the operation has {} variables but the {} only {}: give it n_vars >= {}", operation,
        n_vars, source.source_name(), source.n_vars(), n_vars);
  }
  if (narrowest_guard(source) < widest_stencil) {
    throw Error::format(
        "driver of operation '{}': an action reads {} guard cells, but the {} has {}: give its blocks "
        "guard >= {}",
        operation, widest_stencil, source.source_name(), narrowest_guard(source), widest_stencil);
  }
  const std::vector<int> have = levels_of(source);
  for (int level : levels)
    if (std::find(have.begin(), have.end(), level) == have.end()) {
      throw Error::format(
          "driver of operation '{}': an action iterates over level {}, but the {} has no block on it "
          "(its levels: {})",
          operation, level, source.source_name(), fmt::join(have, ", "));
    }
}

ActionRoutine routine(const ActionRegistry& registry, DataSource& source, const char* name,
                      const char* declaration_json, std::initializer_list<const char*> actions) {
  std::vector<ActionBody> bodies;
  for (const char* a : actions) bodies.push_back(registry.body(a));
  return stage_routine(name, std::move(bodies), source, ActionDeclaration::from_json(declaration_json));
}

void fill_guards(const ActionRegistry& registry, DataSource& source, const char* operation,
                 const std::vector<int>& variables) {
  if (!registry.hooks.fill_guards) {
    throw Error::format(
        "driver of operation '{}': the plan fills guard cells but the registry's hooks.fill_guards is "
        "empty: give one",
        operation);
  }
  registry.hooks.fill_guards(source, variables);
}

void reduce(const ActionRegistry& registry, DataSource& source, const char* operation, const char* name,
            const std::vector<int>& variables) {
  if (!registry.hooks.reduce) {
    throw Error::format(
        "driver of operation '{}': the plan reduces '{}' but the registry's hooks.reduce is empty: give "
        "one",
        operation, name);
  }
  registry.hooks.reduce(source, name, variables);
}

void PendingFills::fill_guards(const ActionRegistry& registry, DataSource& source, const char* operation,
                               const std::vector<int>& variables) {
  for (int v : variables)
    if (std::find(variables_.begin(), variables_.end(), v) == variables_.end()) variables_.push_back(v);
  if (!registry.hooks.filling_order) flush(registry, source, operation);
}

BlockIterator* PendingFills::order(const ActionRegistry& registry, DataSource& source, const char* operation,
                                   const char* bundle) {
  if (variables_.empty()) return nullptr;
  BlockIterator* order = registry.hooks.filling_order(source, variables_);
  if (!order) {
    throw Error::format(
        "driver of operation '{}': hooks.filling_order gave no block order for the fill before bundle '{}': "
        "return one, or leave the hook empty",
        operation, bundle);
  }
  variables_.clear();
  return order;
}

void PendingFills::flush(const ActionRegistry& registry, DataSource& source, const char* operation) {
  if (variables_.empty()) return;
  driver::fill_guards(registry, source, operation, variables_);
  variables_.clear();
}

}  // namespace korch::plan::driver
