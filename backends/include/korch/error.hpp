// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch's one exception type, in the lowest layer (backends/) so that every layer may throw it.
// Messages name the object, its state and what the caller can do.
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <utility>

namespace korch {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}

  // korch::Error::format("team '{}' is {}: call wait() first", name, mode)
  template <class... Args>
  static Error format(fmt::format_string<Args...> pattern, Args&&... args) {
    return Error(fmt::format(pattern, std::forward<Args>(args)...));
  }
};

}  // namespace korch
