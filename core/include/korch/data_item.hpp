// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The base of everything a thread team applies an action routine to: tiles, blocks, data packets,
// action metadata. Items travel between teams as std::shared_ptr<DataItem>;
// a team owns an item from enqueue until it has applied its routine and handed the item to its
// work subscriber (or dropped its reference when it has none).
#pragma once

#include <string>

namespace korch {

class DataItem {
 public:
  DataItem() = default;
  DataItem(const DataItem&) = default;
  DataItem& operator=(const DataItem&) = default;
  DataItem(DataItem&&) = default;
  DataItem& operator=(DataItem&&) = default;
  virtual ~DataItem();

  // What error messages call this item, e.g. "tile 12 (level 2, block 3)". The default names the
  // dynamic type and the address.
  virtual std::string describe() const;

  // Which of korch's item classes this is (other: any other), so that routines dispatch on every
  // item without a dynamic_cast, which costs a walk of the class hierarchy and name comparisons.
  enum class Kind { tile, block, packet, other };
  virtual Kind kind() const noexcept { return Kind::other; }
};

}  // namespace korch
