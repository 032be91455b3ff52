// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/data_source.hpp>

#include <algorithm>
#include <atomic>
#include <climits>
#include <set>

namespace korch {

namespace {
std::atomic<std::uint64_t> next_stamp{1};
std::uint64_t fresh_stamp() noexcept { return next_stamp.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

DataSource::DataSource() noexcept : stamp_(fresh_stamp()) {}
DataSource::DataSource(const DataSource&) noexcept : stamp_(fresh_stamp()) {}
DataSource& DataSource::operator=(const DataSource& other) noexcept {
  if (this != &other) new_layout();
  return *this;
}

bool DataSource::is_leaf(int) const { return true; }

void DataSource::new_layout() noexcept { stamp_ = fresh_stamp(); }

int narrowest_guard(const DataSource& source) {
  int narrowest = INT_MAX;
  for (int b = 0; b < source.n_blocks(); ++b) {
    const BlockMeta& m = source.block(b);
    for (int d = 0; d < 3; ++d)
      if (m.stored.extent(d) > 1)
        narrowest = std::min({narrowest, m.interior.lo[d] - m.stored.lo[d], m.stored.hi[d] - m.interior.hi[d]});
  }
  return narrowest == INT_MAX ? 0 : narrowest;
}

std::vector<int> levels_of(const DataSource& source) {
  std::set<int> levels;
  for (int b = 0; b < source.n_blocks(); ++b) levels.insert(source.block(b).level);
  return {levels.begin(), levels.end()};
}

double mean_tiles_per_block(const DataSource& source) {
  if (source.n_blocks() == 0) return 0.0;
  std::size_t tiles = 0;
  for (int b = 0; b < source.n_blocks(); ++b) tiles += source.tiles_of(b).size();
  return static_cast<double>(tiles) / source.n_blocks();
}

}  // namespace korch
