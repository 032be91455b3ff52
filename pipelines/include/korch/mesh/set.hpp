// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::Set: a named set of mesh elements (nodes, edges, cells ...), OP2's op_set. A cheap handle:
// copies refer to the same set, and two handles are equal when they refer to the same set.
#pragma once

#include <memory>
#include <string>

namespace korch::mesh {

class Set {
 public:
  Set() = default;  // a null handle; every use of it is an error
  // size >= 0; throws korch::Error otherwise.
  Set(std::string name, int size);

  bool valid() const noexcept { return impl_ != nullptr; }
  const std::string& name() const;
  int size() const;

  friend bool operator==(const Set& a, const Set& b) noexcept { return a.impl_ == b.impl_; }
  friend bool operator!=(const Set& a, const Set& b) noexcept { return a.impl_ != b.impl_; }
  // A stable key for containers (the identity of the set).
  const void* key() const noexcept { return impl_.get(); }

 private:
  struct Impl {
    std::string name;
    int size;
  };
  std::shared_ptr<const Impl> impl_;
};

}  // namespace korch::mesh
