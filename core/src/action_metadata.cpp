// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/action_metadata.hpp>

#include <fmt/format.h>

namespace korch {

std::string ActionMetadata::describe() const {
  return fmt::format("action metadata of block {}{}{}", block_, tag_.empty() ? "" : " tag ", tag_);
}

}  // namespace korch
