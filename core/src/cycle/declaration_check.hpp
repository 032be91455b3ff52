// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cycle's check of a bundle's action declarations against its configuration (docs/planner.md,
// "The runtime's check"): action-parallel pipelines see every item at the same time, so no two of
// them may write the same variable, nor may one read what another writes.
#pragma once

#include <korch/bundle.hpp>
#include <korch/configuration.hpp>

namespace korch::detail {

// Throws korch::Error naming both actions, the variable and the configuration when two
// action-parallel pipelines (distributor groups) conflict. Routines without a declaration are not
// checked. Pipelines of one data-parallel group never see the same item and are not compared.
void check_declarations(const Configuration& configuration, const Bundle& bundle);

}  // namespace korch::detail
