// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A plan as C++ source (docs/planner.md, "Generated drivers"): one function that runs the plan's
// steps on a korch::Runtime, bundle by bundle, with each bundle's configuration inlined as korch
// configuration JSON and its stage routines built from the bodies a linked ActionRegistry holds:
//   void FUNCTION(korch::Runtime& runtime, korch::DataSource& source, const korch::plan::ActionRegistry& registry);
#pragma once

#include <korch/plan/operation.hpp>
#include <korch/plan/plan.hpp>

#include <string>

namespace korch::plan {

// Why `name` cannot name the driver's function ("" when it can): a C++ identifier (a letter or '_',
// then letters, digits and '_'), not a keyword or alternative token of C++ (up to C++20), and not
// reserved to the implementation (a double underscore anywhere, '_' then an upper-case letter, or
// a leading '_' in the global namespace, where the driver's function lives).
std::string identifier_problem(const std::string& name);

// The driver's source. Throws korch::Error when `function` cannot name it (identifier_problem) or
// the plan is not one of `operation` (check_plan, plan_check.hpp).
std::string generate_driver(const Operation& operation, const Plan& plan,
                            const std::string& function = "korch_plan_run");

}  // namespace korch::plan
