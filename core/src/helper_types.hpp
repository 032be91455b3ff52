// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which data types each helper kind takes and gives: a configuration's helpers are checked against
// these rules before it runs, and a helper that breaks them is refused with its kind's rule.
#pragma once

#include <korch/configuration.hpp>

#include <string>

namespace korch::detail {

// Whether helper `h` may take its input type and give its output type; when not, `why` says what
// its kind takes and gives.
bool helper_types_ok(const HelperConfig& h, std::string& why);

}  // namespace korch::detail
