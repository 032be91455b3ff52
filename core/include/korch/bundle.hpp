// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A bundle of action routines: what one Runtime::execute call
// applies. Configurations refer to the routines by name; the bundle's parameters reach every
// routine through ActionContext::parameters_as<T>().
#pragma once

#include <korch/action_parameters.hpp>
#include <korch/action_routine.hpp>

#include <string>
#include <vector>

namespace korch {

class Bundle {
 public:
  explicit Bundle(std::string name = "bundle", ActionParameters parameters = {})
      : name_(std::move(name)), parameters_(std::move(parameters)) {}

  // Adds a routine; its name must be unique in the bundle and not empty.
  Bundle& add(ActionRoutine routine);

  const std::string& name() const noexcept { return name_; }
  const std::vector<ActionRoutine>& routines() const noexcept { return routines_; }
  std::size_t size() const noexcept { return routines_.size(); }
  const ActionRoutine* find(const std::string& routine_name) const noexcept;
  const ActionParameters& parameters() const noexcept { return parameters_; }

 private:
  std::string name_;
  ActionParameters parameters_;
  std::vector<ActionRoutine> routines_;
};

}  // namespace korch
