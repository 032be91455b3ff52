// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ActionRoutine::declared: attaches a checked declaration (action_declaration.hpp) to a routine.
// Apart from action_declaration.cpp, which the planner's fuzz targets compile without Kokkos.
#include <korch/action_routine.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>

namespace korch {

ActionRoutine ActionRoutine::declared(ActionDeclaration declaration) const {
  if (!state_) throw Error("an empty action routine cannot carry a declaration: give it a name and a function first");
  if (declaration.action != name()) {
    throw Error::format("routine '{}' was given the declaration of action '{}': declare the routine under its own name",
                        excerpt(name()), excerpt(declaration.action));
  }
  declaration.check();
  ActionRoutine r;
  State s = *state_;
  s.declaration = std::make_shared<const ActionDeclaration>(std::move(declaration));
  r.state_ = std::make_shared<const State>(std::move(s));
  return r;
}

}  // namespace korch
