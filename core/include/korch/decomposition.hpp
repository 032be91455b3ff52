// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which rank owns which block: the grid's blocks ordered along a space-filling curve (Morton
// order of their block coordinates) and cut into contiguous, balanced ranges, one per rank
// (docs/ranks.md). Every rank computes the same decomposition from the same inputs, so no message
// is needed to learn who owns a neighbour.
//
// Block ids here are global: x fastest, id = bx + nx * (by + ny * bz), as korch::Grid numbers the
// blocks of a whole grid.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace korch {

class Decomposition {
 public:
  // Throws korch::Error when a count is not positive or when there are more ranks than blocks
  // (a rank would own nothing).
  Decomposition(std::array<int, 3> blocks, int n_ranks);

  int n_ranks() const noexcept { return n_ranks_; }
  int n_blocks() const noexcept { return static_cast<int>(owner_.size()); }
  const std::array<int, 3>& blocks() const noexcept { return blocks_; }

  // The rank owning a global block id.
  int owner(int global_block) const;
  // The blocks of a rank, ascending global ids (so that one rank's Grid numbers them as the whole
  // grid does).
  const std::vector<int>& blocks_of(int rank) const;
  // The global id of block coordinates (no wrapping: each in [0, blocks[d])).
  int global_id(std::array<int, 3> index) const noexcept {
    return index[0] + blocks_[0] * (index[1] + blocks_[1] * index[2]);
  }
  std::array<int, 3> index_of(int global_block) const noexcept;
  // The Morton key of block coordinates (bits interleaved x, y, z from the lowest).
  static std::uint64_t morton_key(std::array<int, 3> index) noexcept;

 private:
  std::array<int, 3> blocks_;
  int n_ranks_;
  std::vector<int> owner_;
  std::vector<std::vector<int>> blocks_of_;
};

}  // namespace korch
