// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/bundle.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>

namespace korch {

Bundle& Bundle::add(ActionRoutine routine) {
  if (!routine || routine.name().empty()) {
    throw Error::format("bundle '{}': a routine needs a name and a function", excerpt(name_));
  }
  if (find(routine.name())) {
    throw Error::format("bundle '{}' already has a routine '{}': give each routine its own name", excerpt(name_),
                        excerpt(routine.name()));
  }
  routines_.push_back(std::move(routine));
  return *this;
}

const ActionRoutine* Bundle::find(const std::string& routine_name) const noexcept {
  for (const auto& r : routines_)
    if (r.name() == routine_name) return &r;
  return nullptr;
}

}  // namespace korch
