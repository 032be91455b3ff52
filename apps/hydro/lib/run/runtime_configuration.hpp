// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime configuration of the hand-bundled step: the built-in that --config names
// (configuration_names.hpp) with the hydro action bound to its teams and the hydro variables on its
// packets. The action-parallel one runs the "diagnostics" action on its device team, whose packets
// carry the density only.
#pragma once

#include "options.hpp"

#include <korch/configuration.hpp>
#include <korch/runtime.hpp>

namespace korch::hydro {

// The runtime configuration for an Options value when the current state starts at variable
// `state` (0 or var_new).
Configuration make_configuration(const Options& options, int state = 0);

// The runtime every hydro run makes: two teams of options.threads and two helper teams of one
// thread, which fit every hydro configuration (a run may switch between them).
RuntimeOptions runtime_options(const Options& options);

}  // namespace korch::hydro
