// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the suites that check error messages: the message a call throws, and a substring test.
#pragma once

#include <korch/error.hpp>

#include <string>

namespace korch::test {

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The message of the korch::Error that `f` throws ("" if it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace korch::test
