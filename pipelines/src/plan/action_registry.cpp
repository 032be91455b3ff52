// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/plan/action_registry.hpp>

#include <fmt/format.h>

namespace korch::plan {

ActionRegistry& ActionRegistry::global() {
  static ActionRegistry registry;
  return registry;
}

void ActionRegistry::add(const std::string& name, ActionBody body) {
  if (name.empty()) throw Error("action registry: an action body without a name: give it the action's name");
  if (!body) throw Error::format("action registry: action '{}': the body is empty: give a callable", name);
  if (!bodies_.emplace(name, std::move(body)).second)
    throw Error::format("action registry: action '{}' is registered twice: register each action once", name);
}

const ActionBody& ActionRegistry::body(const std::string& name) const {
  const auto it = bodies_.find(name);
  if (it == bodies_.end()) {
    throw Error::format(
        "action registry: no body for action '{}' (registered: {}): register it before running the "
        "driver",
        name, names().empty() ? std::string("none") : fmt::format("{}", fmt::join(names(), ", ")));
  }
  return it->second;
}

std::vector<std::string> ActionRegistry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, body] : bodies_) out.push_back(name);
  return out;
}

}  // namespace korch::plan
