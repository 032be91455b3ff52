// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestMesh::adapt: the forest changes, the new leaves are shared among the ranks anew, and each
// new leaf takes its values from the old leaves (docs/adaptive-mesh.md, "Regrids").
#include "forest_ranks.hpp"

#include <korch/error.hpp>
#include <korch/forest_mesh.hpp>

#include <algorithm>

namespace korch {

std::vector<BlockKey> ForestMesh::sources_of(const BlockForest& before, const BlockKey& leaf) const {
  if (before.is_leaf(leaf)) return {leaf};
  // Coarsened: the old children, each a leaf (one level per adapt).
  if (before.contains(leaf)) return before.children(leaf);
  // Refined: the old parent, and its neighbours for the slopes of the prolongation.
  return detail::leaves_near(before, before.parent(leaf), 1);
}

std::vector<int> ForestMesh::new_owners(const BlockForest& before, const std::vector<int>& old_owners,
                                        bool changed) const {
  if (old_leaf_costs_.empty()) return changed ? detail::morton_partition(forest_.n_leaves(), comm_.size()) : old_owners;
  std::vector<double> costs;
  const auto cost_of = [&](const BlockKey& old_leaf) {
    return old_leaf_costs_[static_cast<std::size_t>(before.leaf_index(old_leaf))];
  };
  for (const BlockKey& leaf : forest_.leaves()) {
    if (before.is_leaf(leaf)) {
      costs.push_back(cost_of(leaf));
    } else if (before.contains(leaf)) {  // merged: the mean of its old leaves
      const auto children = before.children(leaf);
      double sum = 0;
      for (const BlockKey& c : children) sum += cost_of(c);
      costs.push_back(sum / static_cast<double>(children.size()));
    } else {  // refined: what its old parent cost
      costs.push_back(cost_of(before.parent(leaf)));
    }
  }
  if (!changed && detail::partition_imbalance(costs, old_owners, comm_.size()) <= 1.0 + rebalance_above_)
    return old_owners;
  return detail::morton_partition(costs, comm_.size());
}

// Every rank sends the old leaves it owned to the ranks whose new leaves read them, so that
// `old_data` holds, on each rank, every old leaf its new leaves are filled from.
void ForestMesh::move_old_leaves(const BlockForest& before, const std::vector<int>& old_owners,
                                 std::unordered_map<BlockKey, std::vector<double>, BlockKeyHash>& old_data) const {
  const std::size_t ranks = static_cast<std::size_t>(comm_.size()), block = fresh_block().size();
  const int me = comm_.rank();
  // Per rank pair, the old leaf indices to move, ascending (both sides list them the same way).
  std::vector<std::vector<int>> send(ranks), receive(ranks);
  for (int i = 0; i < forest_.n_leaves(); ++i) {
    const int reader = owners_[static_cast<std::size_t>(i)];
    for (const BlockKey& source : sources_of(before, forest_.leaves()[static_cast<std::size_t>(i)])) {
      const int index = before.leaf_index(source);
      const int holder = old_owners[static_cast<std::size_t>(index)];
      if (holder == reader) continue;
      if (holder == me) send[static_cast<std::size_t>(reader)].push_back(index);
      if (reader == me) receive[static_cast<std::size_t>(holder)].push_back(index);
    }
  }
  std::vector<std::vector<double>> buffers(ranks);
  std::vector<std::size_t> sizes(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    for (auto* list : {&send[r], &receive[r]}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    for (int index : send[r]) {
      const auto& d = old_data.at(before.leaves()[static_cast<std::size_t>(index)]);
      buffers[r].insert(buffers[r].end(), d.begin(), d.end());
    }
    sizes[r] = receive[r].size() * block;
  }
  const auto received = detail::swap_buffers(comm_, buffers, sizes, 7302);
  for (std::size_t r = 0; r < ranks; ++r)
    for (std::size_t n = 0; n < receive[r].size(); ++n) {
      const auto first = received[r].begin() + static_cast<std::ptrdiff_t>(n * block);
      old_data[before.leaves()[static_cast<std::size_t>(receive[r][n])]].assign(
          first, first + static_cast<std::ptrdiff_t>(block));
    }
}

RegridCounts ForestMesh::adapt(const std::vector<BlockKey>& refine, const std::vector<BlockKey>& coarsen,
                               bool fill_afterwards) {
  for (const BlockKey& k : coarsen) forest_.leaf_index(k);
  const BlockForest before = forest_;
  const std::vector<int> old_owners = owners_;
  RegridCounts counts;
  counts.refined = forest_.refine(refine);
  std::vector<BlockKey> still_leaves;
  for (const BlockKey& k : coarsen)
    if (forest_.is_leaf(k) && k.level > 0) still_leaves.push_back(k);
  counts.derefined = forest_.derefine(still_leaves);
  counts.leaves = forest_.n_leaves();
  const bool changed = counts.refined > 0 || counts.derefined > 0;
  owners_ = new_owners(before, old_owners, changed);
  if (!changed) {
    for (std::size_t i = 0; i < owners_.size(); ++i) counts.migrated += owners_[i] != old_owners[i];
    if (counts.migrated == 0) return counts;
  }

  // The old leaves this rank owned, then those other ranks send for its new leaves.
  std::unordered_map<BlockKey, std::vector<double>, BlockKeyHash> old_data;
  for (int i = 0; i < before.n_leaves(); ++i) {
    const BlockKey& leaf = before.leaves()[static_cast<std::size_t>(i)];
    if (old_owners[static_cast<std::size_t>(i)] == comm_.rank()) old_data[leaf] = std::move(data_.at(leaf));
  }
  move_old_leaves(before, old_owners, old_data);

  // New leaves take the old composite mesh's values: copies, means of finer cells, or limited
  // prolongation from coarser ones, each of which keeps every coarse cell's mean.
  ForestGuardFill old_fill(before, shape_.cells, shape_.guard, shape_.n_vars);
  if (boundary_) old_fill.set_boundary(boundary_);
  for (auto& [leaf, d] : old_data) old_fill.set_block(leaf, array_of(d));
  std::unordered_map<BlockKey, std::vector<double>, BlockKeyHash> data;
  std::vector<double> values(static_cast<std::size_t>(shape_.n_vars));
  for (int i = 0; i < forest_.n_leaves(); ++i) {
    if (owners_[static_cast<std::size_t>(i)] != comm_.rank()) continue;
    const BlockKey& leaf = forest_.leaves()[static_cast<std::size_t>(i)];
    if (before.is_leaf(leaf)) {
      // Moved, not copied: the buffer stays where old_fill reads it for the new leaves.
      data[leaf] = std::move(old_data.at(leaf));
      continue;
    }
    const BlockArray a = array_of(data[leaf] = fresh_block());
    for (int k = 0; k < shape_.cells[2]; ++k)
      for (int j = 0; j < shape_.cells[1]; ++j)
        for (int n = 0; n < shape_.cells[0]; ++n) {
          const ForestGuardFill::Cell cell{leaf.position[0] * shape_.cells[0] + n,
                                           leaf.position[1] * shape_.cells[1] + j,
                                           leaf.position[2] * shape_.cells[2] + k};
          old_fill.values_at(leaf.level, cell, values.data());
          const std::ptrdiff_t at = (n + shape_.guard[0]) * a.stride[1] + (j + shape_.guard[1]) * a.stride[2] +
                                    (k + shape_.guard[2]) * a.stride[3];
          for (int v = 0; v < shape_.n_vars; ++v) a.data[v * a.stride[0] + at] = values[static_cast<std::size_t>(v)];
        }
  }
  data_ = std::move(data);
  list_leaves();
  if (fill_afterwards) fill_guard_cells();
  return counts;
}

}  // namespace korch
