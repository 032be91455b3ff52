// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a rank's guard fills read of other ranks' leaves, from the leaves' plans: the boxes a copy
// of each such leaf needs (docs/adaptive-mesh.md, "On ranks"). Cells read one by one travel as
// cells; groups of 2^dims cells read only through a coarser cell's mean travel as their sums.
#include "forest_fill_plan.hpp"

#include <algorithm>
#include <unordered_map>

namespace korch {

namespace {

using ReadBox = ForestGuardFill::Box;

// The stored cell (i, j, k) at `offset` doubles from variable 0 of cell (0, 0, 0): the largest
// stride first, axes of one cell left at 0 (their stride may equal another's).
std::array<int, 3> stored_index(const BlockArray& array, std::ptrdiff_t offset) {
  std::array<int, 3> axis{0, 1, 2};
  std::sort(axis.begin(), axis.end(), [&](int a, int b) { return array.stride[a + 1] > array.stride[b + 1]; });
  std::array<int, 3> index{0, 0, 0};
  for (const int a : axis) {
    if (array.extent[a + 1] < 2) continue;
    index[a] = static_cast<int>(offset / array.stride[a + 1]);
    offset -= index[a] * array.stride[a + 1];
  }
  return index;
}

void include(ReadBox& box, const std::array<int, 3>& at) {
  if (box.empty()) {
    box.lo = at;
    box.hi = {at[0] + 1, at[1] + 1, at[2] + 1};
    return;
  }
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = std::min(box.lo[a], at[a]);
    box.hi[a] = std::max(box.hi[a], at[a] + 1);
  }
}

// The box grown outward to whole groups: groups start an even distance from the interior's first
// cell (`guard` stored cells in) along the forest's axes.
ReadBox grown_to_groups(ReadBox box, const std::array<int, 3>& guard, int dims) {
  for (int a = 0; a < dims; ++a) {
    box.lo[a] -= (box.lo[a] - guard[a]) % 2;
    box.hi[a] += (box.hi[a] - guard[a]) % 2;
  }
  return box;
}

// `sums` less the part `cells` covers, where what is left is a box: `cells` spans `sums` along every
// axis but one and holds one end of it along that one.
ReadBox trimmed(ReadBox sums, const ReadBox& cells) {
  for (int a = 0; a < 3; ++a) {
    bool spans = true;
    for (int b = 0; b < 3; ++b)
      if (b != a && (cells.lo[b] > sums.lo[b] || cells.hi[b] < sums.hi[b])) spans = false;
    if (!spans) continue;
    if (cells.lo[a] <= sums.lo[a] && sums.lo[a] < cells.hi[a]) sums.lo[a] = std::min(cells.hi[a], sums.hi[a]);
    if (cells.lo[a] < sums.hi[a] && sums.hi[a] <= cells.hi[a]) sums.hi[a] = std::max(cells.lo[a], sums.lo[a]);
  }
  return sums.empty() ? ReadBox{} : sums;
}

// Two boxes where they carry fewer values than the one box holding both.
ForestGuardFill::Read as_read(const ForestGuardFill::Read& raw, const std::array<int, 3>& guard, int dims) {
  if (raw.sums.empty() || raw.cells.empty()) return raw;
  const ReadBox cells = grown_to_groups(raw.cells, guard, dims);
  const ReadBox sums = trimmed(raw.sums, cells);
  if (sums.values() + cells.values() >= raw.bounds().values()) return {ReadBox{}, raw.bounds()};
  return {sums, cells};
}

}  // namespace

ForestGuardFill::Box ForestGuardFill::Read::bounds() const noexcept {
  if (sums.empty()) return cells;
  ReadBox all = sums;
  all.group = 1;
  if (cells.empty()) return all;
  for (int a = 0; a < 3; ++a) {
    all.lo[a] = std::min(all.lo[a], cells.lo[a]);
    all.hi[a] = std::max(all.hi[a], cells.hi[a]);
  }
  return all;
}

std::optional<ForestGuardFill::BoxesRead> ForestGuardFill::cells_read(const std::vector<BlockKey>& leaves) const {
  std::unordered_map<const double*, BlockKey> key_of;  // a leaf's data -> the leaf
  for (const auto& [key, data] : blocks_) key_of.emplace(data.array.data, key);
  BoxesRead reads;
  const auto read = [&](const double* leaf, const double* cell, bool in_mean) {
    const BlockKey& key = key_of.at(leaf);
    Read& r = reads[key];
    include(in_mean ? r.sums : r.cells, stored_index(blocks_.at(key).array, cell - leaf));
  };
  const int group = 1 << forest_.shape().dims;
  // With an odd number of cells along an axis, a coarser cell's group may straddle two leaves.
  bool groups_fit = true;
  for (int a = 0; a < forest_.shape().dims; ++a) groups_fit = groups_fit && cells_[a] % 2 == 0;
  std::vector<bool> in_mean;
  for (const BlockKey& leaf : leaves) {
    const LeafPlan& plan = plan_of(leaf, blocks_.at(leaf));
    if (!plan.slow.empty()) return std::nullopt;
    in_mean.assign(plan.sources.size(), false);
    for (const Term& term : plan.terms)
      if (term.count == group && groups_fit)
        for (int c = 0; c < group; ++c) in_mean[static_cast<std::size_t>(term.first + c)] = true;
    for (std::size_t s = 0; s < plan.sources.size(); ++s) read(plan.sources[s].leaf, plan.sources[s].cell, in_mean[s]);
    for (const LeafPlan::Copy& copy : plan.copies)
      for (int r = 0; r < copy.rows; ++r)
        for (int n = 0; n < copy.count; ++n) read(copy.source.leaf, copy.source.cell + r * copy.step + n, false);
  }
  // A mean reads a whole group, so the box of the cells means read is one of whole groups.
  for (auto& entry : reads) {
    Read& r = entry.second;
    if (!r.sums.empty()) r.sums.group = group;
    r = as_read(r, guard_, forest_.shape().dims);
  }
  return reads;
}

}  // namespace korch
