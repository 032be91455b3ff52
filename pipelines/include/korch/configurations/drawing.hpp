// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A Graphviz (DOT) drawing of a configuration, as docs/configurations.md shows every built-in:
// left to right from the distributor, host teams blue and device teams green (by their data type),
// each with its action, data type and threads; helpers as ellipses with what their packets carry,
// routers and the distributor as diamonds; work edges solid with the data type they carry (a
// distributor edge with its group, weight or policy, a router edge with its share), thread edges
// dashed. `dot -Tpng` renders it (scripts/docs-configurations).
#pragma once

#include <korch/configuration.hpp>

#include <string>

namespace korch::configurations {

std::string to_dot(const Configuration& configuration);

}  // namespace korch::configurations
