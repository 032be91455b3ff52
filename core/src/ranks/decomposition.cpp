// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/decomposition.hpp>
#include <korch/error.hpp>

#include <algorithm>
#include <numeric>

namespace korch {

Decomposition::Decomposition(std::array<int, 3> blocks, int n_ranks) : blocks_(blocks), n_ranks_(n_ranks) {
  static const char* axis[3] = {"x", "y", "z"};
  std::int64_t n = 1;
  for (int d = 0; d < 3; ++d) {
    if (blocks_[d] < 1 || blocks_[d] > (1 << 21))
      throw Error::format("decomposition: {} blocks in {}: use 1 to {} blocks per direction", blocks_[d], axis[d],
                          1 << 21);
    n *= blocks_[d];
  }
  if (n_ranks_ < 1) throw Error::format("decomposition: {} ranks: use 1 or more", n_ranks_);
  if (n > (std::int64_t{1} << 31) - 1) throw Error::format("decomposition: {} blocks exceed the limit of 2^31 - 1", n);
  if (n_ranks_ > n)
    throw Error::format(
        "decomposition: {} ranks for {} blocks: every rank needs at least one block; use at most {} "
        "ranks or more blocks",
        n_ranks_, n, n);
  std::vector<int> curve(static_cast<std::size_t>(n));
  std::iota(curve.begin(), curve.end(), 0);
  std::vector<std::uint64_t> key(curve.size());
  for (int id = 0; id < static_cast<int>(n); ++id) key[static_cast<std::size_t>(id)] = morton_key(index_of(id));
  std::sort(curve.begin(), curve.end(),
            [&](int a, int b) { return key[static_cast<std::size_t>(a)] < key[static_cast<std::size_t>(b)]; });
  // Rank r takes curve positions [r n / R, (r + 1) n / R): sizes differ by at most one block.
  owner_.assign(curve.size(), 0);
  blocks_of_.assign(static_cast<std::size_t>(n_ranks_), {});
  for (int r = 0; r < n_ranks_; ++r) {
    const std::int64_t first = r * n / n_ranks_, last = (r + 1) * n / n_ranks_;
    auto& mine = blocks_of_[static_cast<std::size_t>(r)];
    for (std::int64_t p = first; p < last; ++p) {
      const int id = curve[static_cast<std::size_t>(p)];
      owner_[static_cast<std::size_t>(id)] = r;
      mine.push_back(id);
    }
    std::sort(mine.begin(), mine.end());
  }
}

int Decomposition::owner(int global_block) const {
  if (global_block < 0 || global_block >= n_blocks())
    throw Error::format("decomposition: block {} does not exist: blocks are 0..{}", global_block, n_blocks() - 1);
  return owner_[static_cast<std::size_t>(global_block)];
}

const std::vector<int>& Decomposition::blocks_of(int rank) const {
  if (rank < 0 || rank >= n_ranks_)
    throw Error::format("decomposition: rank {} does not exist: ranks are 0..{}", rank, n_ranks_ - 1);
  return blocks_of_[static_cast<std::size_t>(rank)];
}

std::array<int, 3> Decomposition::index_of(int global_block) const noexcept {
  return {global_block % blocks_[0], (global_block / blocks_[0]) % blocks_[1],
          global_block / (blocks_[0] * blocks_[1])};
}

std::uint64_t Decomposition::morton_key(std::array<int, 3> index) noexcept {
  std::uint64_t key = 0;
  for (int bit = 0; bit < 21; ++bit)
    for (int d = 0; d < 3; ++d)
      key |= static_cast<std::uint64_t>((static_cast<unsigned>(index[static_cast<std::size_t>(d)]) >> bit) & 1u)
             << (3 * bit + d);
  return key;
}

}  // namespace korch
