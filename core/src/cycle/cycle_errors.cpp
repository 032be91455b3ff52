// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "cycle_errors.hpp"

#include <korch/excerpt.hpp>

#include <fmt/format.h>

namespace korch::detail {

void CycleErrors::add(const std::string& where, std::exception_ptr e) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!first_) {
    first_ = e;
    where_ = where;
  }
  ++count_;
}

bool CycleErrors::any() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return first_ != nullptr;
}

void CycleErrors::rethrow(const std::string& configuration) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!first_) return;
  std::string what;
  try {
    std::rethrow_exception(first_);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "unknown exception";
  }
  const std::string more = count_ > 1 ? fmt::format(" ({} more errors)", count_ - 1) : std::string();
  const std::string in = where_.empty() ? std::string() : " in " + where_;
  const std::string message = fmt::format("runtime: execution cycle of configuration '{}' failed{}: {}{}",
                                          excerpt(configuration), in, what, more);
  try {
    std::rethrow_exception(first_);
  } catch (...) {
    std::throw_with_nested(Error(message));
  }
}

}  // namespace korch::detail
