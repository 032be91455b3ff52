// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/data_item.hpp>
#include <korch/type_name.hpp>

#include <fmt/format.h>

namespace korch {

DataItem::~DataItem() = default;

std::string DataItem::describe() const {
  return fmt::format("{} at {}", type_name(typeid(*this)), static_cast<const void*>(this));
}

}  // namespace korch
