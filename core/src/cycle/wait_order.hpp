// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The order in which a cycle waits for its nodes: every publisher (of work or of threads) before
// its subscribers, so that a subscriber is waited for only after everything that feeds it ended.
#pragma once

#include <korch/configuration.hpp>

#include <string>
#include <vector>

namespace korch::detail {

// `declared`: the configuration's teams then helpers, in declaration order (ties keep it). A
// thread edge against the work direction (allowed: a later team lending threads back) makes the
// full order impossible; the order then follows the work edges alone.
std::vector<std::string> wait_order(const Configuration& configuration, const std::vector<std::string>& declared);

}  // namespace korch::detail
