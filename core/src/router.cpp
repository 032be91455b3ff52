// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/router.hpp>

#include <korch/block.hpp>
#include <korch/error.hpp>
#include <korch/tile.hpp>

#include <fmt/format.h>

#include <cmath>

namespace korch {

Router::Router(std::string name, double fraction, RoutingUnit unit)
    : name_(std::move(name)), fraction_(fraction), unit_(unit) {
  if (!(fraction_ >= 0.0 && fraction_ <= 1.0)) {
    throw Error::format("router '{}': fraction {} is not a share: give a number from 0 to 1", name_, fraction_);
  }
}

std::size_t Router::next_unit() {
  const auto k = static_cast<double>(counts_[0] + counts_[1]);
  const std::size_t branch = std::floor((k + 1.0) * fraction_) > std::floor(k * fraction_) ? 0 : 1;
  ++counts_[branch];
  return branch;
}

std::size_t Router::route(const DataItem& item) {
  int block = -1;
  if (auto* t = dynamic_cast<const Tile*>(&item)) {
    block = t->block_id();
  } else if (auto* b = dynamic_cast<const Block*>(&item)) {
    block = b->block_id();
  } else {
    throw Error::format(
        "router '{}': got {}, but a router routes tiles and blocks: put it where the pipeline carries "
        "tiles or blocks",
        name_, item.describe());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (unit_ == RoutingUnit::tile) return next_unit();
  auto [it, first_met] = block_branch_.try_emplace(block, 0);
  if (first_met) it->second = next_unit();
  return it->second;
}

std::shared_ptr<DataItem> Router::hand_on(const DataItem& item) const {
  if (auto* t = dynamic_cast<const Tile*>(&item)) return std::make_shared<Tile>(*t);
  if (auto* b = dynamic_cast<const Block*>(&item)) return std::make_shared<Block>(*b);
  throw Error::format("router '{}': cannot hand on {}: a router routes tiles and blocks", name_, item.describe());
}

std::array<std::size_t, 2> Router::counts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return counts_;
}

}  // namespace korch
