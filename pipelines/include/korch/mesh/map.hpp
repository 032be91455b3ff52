// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::Map: for every element of `from`, `arity` elements of `to` (edge -> 2 cells, cell -> 4
// nodes), OP2's op_map. Stored row-major (element e's targets at e*arity .. e*arity+arity-1) on the
// host and in the backend's device memory. Entries are checked against the target set on creation.
#pragma once

#include <korch/backend/spaces.hpp>
#include <korch/mesh/set.hpp>

#include <Kokkos_Core.hpp>

#include <memory>
#include <string>
#include <vector>

namespace korch::mesh {

class Map {
 public:
  Map() = default;  // null handle
  // values.size() must be from.size() * arity and every value in [0, to.size()); throws
  // korch::Error naming the map, the entry (element, index) and the bad value otherwise.
  Map(std::string name, Set from, Set to, int arity, std::vector<int> values);

  bool valid() const noexcept { return impl_ != nullptr; }
  const std::string& name() const;
  const Set& from() const;
  const Set& to() const;
  int arity() const;
  // Target `index` (0 <= index < arity) of element e of `from`.
  int operator()(int e, int index) const { return impl_->host[static_cast<std::size_t>(e) * impl_->arity + index]; }
  const std::vector<int>& values() const { return impl_->host; }
  const int* host_data() const { return impl_->host.data(); }
  Kokkos::View<const int*, DeviceMemSpace> device_view() const { return impl_->device; }
  // True when no two elements of `from` share target `index` (needed by indirect WRITE/RW in the
  // message-driven executor). Computed once.
  bool injective(int index) const;

  friend bool operator==(const Map& a, const Map& b) noexcept { return a.impl_ == b.impl_; }
  friend bool operator!=(const Map& a, const Map& b) noexcept { return a.impl_ != b.impl_; }
  const void* key() const noexcept { return impl_.get(); }

 private:
  struct Impl {
    std::string name;
    Set from, to;
    int arity;
    std::vector<int> host;
    Kokkos::View<int*, DeviceMemSpace> device;
    mutable std::vector<signed char> injective;  // per index: -1 unknown, 0 no, 1 yes
  };
  std::shared_ptr<const Impl> impl_;
};

}  // namespace korch::mesh
