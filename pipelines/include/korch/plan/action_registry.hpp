// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Action bodies by name, for generated drivers (docs/planner.md, "Generated drivers"): the program
// that links a driver fills a registry with the body of every action of the operation and with the
// hooks for the work between bundles; the driver looks each action up by its name. Registrations
// at static initialisation go to ActionRegistry::global():
//   static const korch::plan::RegisterAction eos("eos", [](korch::DataSource& g, int b, const korch::Box& box) { ...
//   });
#pragma once

#include <korch/plan/executor.hpp>

#include <map>
#include <string>
#include <vector>

namespace korch::plan {

class ActionRegistry {
 public:
  // The registry RegisterAction fills.
  static ActionRegistry& global();

  // Throws korch::Error for an empty name or body, or a name already registered.
  void add(const std::string& name, ActionBody body);
  bool has(const std::string& name) const noexcept { return bodies_.count(name) > 0; }
  // Throws korch::Error naming the action and the registered ones when `name` is not registered.
  const ActionBody& body(const std::string& name) const;
  std::vector<std::string> names() const;

  ExecutionHooks hooks;  // guard-cell fills and reductions between bundles

 private:
  std::map<std::string, ActionBody> bodies_;
};

// Registers a body in ActionRegistry::global() when constructed (at static initialisation for a
// namespace-scope object).
struct RegisterAction {
  RegisterAction(const std::string& name, ActionBody body) { ActionRegistry::global().add(name, std::move(body)); }
};

}  // namespace korch::plan
