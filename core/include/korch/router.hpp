// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Router: the choice a data-parallel split in the middle of a pipeline makes (docs/data-packets.md,
// "Routers"). Each routing unit (an item, or with unit block every item of one block) goes to one
// of two subscribers: the first gets the share `fraction` of the units, the second the rest.
//
// The choice is a running count, not a random draw: unit k (0-based, in the order the router meets
// the units) goes to the first subscriber exactly when floor((k+1)·fraction) > floor(k·fraction).
// So after n units the first has had floor(n·fraction) of them (up to the rounding of that product)
// at every point of a cycle, not only on average, and a one-thread router fed in a fixed order
// routes the same units the same way every time.
#pragma once

#include <korch/configuration.hpp>
#include <korch/data_item.hpp>

#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace korch {

class Router {
 public:
  // Throws korch::Error naming the router when fraction is outside [0, 1].
  Router(std::string name, double fraction, RoutingUnit unit);

  // 0 (the first subscriber) or 1 (the second) for `item`, a tile or a block; thread-safe. With
  // unit block, every tile of a block gets the choice made for the block's first tile met. Throws
  // korch::Error naming the router and the item for any other kind of item.
  std::size_t route(const DataItem& item);
  // A new item that stands for `item` (a tile or a block refers to its source's data and owns
  // none, so the copy is the same piece of the grid): the router's routine sees its item by
  // reference, and the team that runs it keeps the item it was given.
  std::shared_ptr<DataItem> hand_on(const DataItem& item) const;
  // Routing units sent each way so far.
  std::array<std::size_t, 2> counts() const;

  const std::string& name() const noexcept { return name_; }
  double fraction() const noexcept { return fraction_; }

 private:
  std::size_t next_unit();  // under mutex_
  std::string name_;
  double fraction_;
  RoutingUnit unit_;
  mutable std::mutex mutex_;
  std::array<std::size_t, 2> counts_{};
  std::unordered_map<int, std::size_t> block_branch_;  // unit block: each block's branch
};

}  // namespace korch
