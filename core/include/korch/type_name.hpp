// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Human-readable C++ type names for error messages (demangled where the compiler allows).
#pragma once

#include <string>
#include <typeinfo>

namespace korch {

std::string type_name(const std::type_info& type);

template <class T>
std::string type_name() {
  return type_name(typeid(T));
}

}  // namespace korch
