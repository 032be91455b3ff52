// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Data item splitter: packet of blocks -> blocks or tiles, packet of tiles -> tiles,
// block -> tiles. A packet must be unpacked first (its data is then in the grid).
#pragma once

#include <korch/data_item.hpp>
#include <korch/data_type.hpp>

#include <memory>
#include <vector>

namespace korch {

class Splitter {
 public:
  explicit Splitter(DataType output) : output_(output) {}
  DataType output() const noexcept { return output_; }
  // Throws korch::Error naming the item when it cannot be split into `output`.
  std::vector<std::shared_ptr<DataItem>> split(const DataItem& item) const;

 private:
  DataType output_;
};

}  // namespace korch
