// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The failures of one cycle, collected from every thread that takes part; the first one is
// rethrown when the cycle has wound down, as a korch::Error naming the configuration and where it
// failed, with the original exception nested.
#pragma once

#include <korch/error.hpp>

#include <cstddef>
#include <exception>
#include <mutex>
#include <string>

namespace korch::detail {

class CycleErrors {
 public:
  // `where`: the step that failed ("starting 'cpu'"), or empty when the error names it itself.
  void add(const std::string& where, std::exception_ptr e);
  bool any() const;
  void rethrow(const std::string& configuration);

 private:
  mutable std::mutex mutex_;
  std::exception_ptr first_;
  std::string where_;
  std::size_t count_ = 0;
};

}  // namespace korch::detail
