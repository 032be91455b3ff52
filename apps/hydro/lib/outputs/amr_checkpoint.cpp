// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checkpoints of the adaptive hydro job (checkpoint.hpp has the file format): the leaves' keys in
// Morton order and their interiors, gathered from every rank; at a restart the tree is rebuilt by
// refining each leaf's ancestors level by level, then every rank takes its own leaves' cells. A
// 2:1 balanced forest cut at any level is balanced too, so the rebuilt tree is the file's, which is
// checked leaf by leaf.
#include "amr_simulation.hpp"
#include "checkpoint.hpp"

#include <korch/error.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace korch::hydro {

namespace {

BlockKey key_of(const std::array<std::int64_t, 4>& k) {
  BlockKey key;
  key.level = static_cast<int>(k[0]);
  key.position = {k[1], k[2], k[3]};
  return key;
}

// Offset of interior cell (i, j, k) of variable v in a leaf's array.
std::ptrdiff_t cell_offset(const BlockArray& a, const ForestMeshShape& s, int v, int i, int j, int k) {
  return v * a.stride[0] + (i + s.guard[0]) * a.stride[1] + (j + s.guard[1]) * a.stride[2] +
         (k + s.guard[2]) * a.stride[3];
}

}  // namespace

std::string AmrSimulation::checkpoint_path() const {
  return (std::filesystem::path(options_.out) / "checkpoint.bin").string();
}

void AmrSimulation::write_checkpoint(const std::string& path) const {
  const ForestMeshShape& s = mesh_->shape();
  CheckpointContent c = checkpoint_fields(options_);
  for (int v = 0; v < n_cons; ++v) {
    std::vector<double> mine;
    for (int b = 0; b < static_cast<int>(mesh_->own_leaves().size()); ++b) {
      const BlockArray& a = mesh_->array(b);
      for (int k = 0; k < s.cells[2]; ++k)
        for (int j = 0; j < s.cells[1]; ++j)
          for (int i = 0; i < s.cells[0]; ++i) mine.push_back(a.data[cell_offset(a, s, state_ + v, i, j, k)]);
    }
    // Every rank's leaves in rank order are the leaves in Morton order.
    c.state[static_cast<std::size_t>(v)] = comm_.size() > 1 ? comm_.all_gather(mine) : mine;  // collective
  }
  if (comm_.rank() != 0) return;
  c.time = time_;
  c.steps = steps_;
  for (const BlockKey& leaf : mesh_->forest().leaves())
    c.leaves.push_back({leaf.level, leaf.position[0], leaf.position[1], leaf.position[2]});
  c.initial_totals = initial_totals_;
  write_checkpoint_file(path, c);
}

void AmrSimulation::rebuild_tree(const CheckpointContent& c, const std::string& path) {
  std::unordered_set<BlockKey, BlockKeyHash> parents;
  for (const auto& k : c.leaves) {
    const BlockKey leaf = key_of(k);
    for (int level = 0; level < leaf.level; ++level) {
      BlockKey parent;
      parent.level = level;
      for (int a = 0; a < 3; ++a)
        parent.position[static_cast<std::size_t>(a)] =
            a < options_.dim ? leaf.position[static_cast<std::size_t>(a)] >> (leaf.level - level) : 0;
      parents.insert(parent);
    }
  }
  for (int level = 0; level < options_.max_level; ++level) {
    std::vector<BlockKey> refine;
    for (const BlockKey& leaf : mesh_->forest().leaves())
      if (leaf.level == level && parents.count(leaf) != 0) refine.push_back(leaf);
    if (refine.empty()) break;
    mesh_->adapt(refine, {}, false);  // collective: every rank read the same file
  }
  const auto& leaves = mesh_->forest().leaves();
  bool same = leaves.size() == c.leaves.size();
  for (std::size_t n = 0; same && n < leaves.size(); ++n) same = leaves[n] == key_of(c.leaves[n]);
  if (!same)
    throw Error::format(
        "checkpoint '{}': its {} leaves are not the leaves of a 2:1 balanced mesh in Morton order (refining their "
        "ancestors gives {}): the file is damaged",
        path, c.leaves.size(), leaves.size());
}

void AmrSimulation::restore(const std::string& path) {
  const CheckpointContent c = read_checkpoint_file(path, options_);
  rebuild_tree(c, path);
  const ForestMeshShape& s = mesh_->shape();
  std::unordered_map<BlockKey, std::size_t, BlockKeyHash> index;
  for (std::size_t n = 0; n < c.leaves.size(); ++n) index[key_of(c.leaves[n])] = n;
  const std::size_t per_leaf = static_cast<std::size_t>(s.cells[0]) * s.cells[1] * s.cells[2];
  state_ = 0;
  for (int b = 0; b < static_cast<int>(mesh_->own_leaves().size()); ++b) {
    const BlockArray& a = mesh_->array(b);
    std::size_t at = index.at(mesh_->own_leaves()[static_cast<std::size_t>(b)]) * per_leaf;
    for (int v = 0; v < n_cons; ++v) {
      const std::vector<double>& state = c.state[static_cast<std::size_t>(v)];
      std::size_t cell = at;
      for (int k = 0; k < s.cells[2]; ++k)
        for (int j = 0; j < s.cells[1]; ++j)
          for (int i = 0; i < s.cells[0]; ++i) a.data[cell_offset(a, s, v, i, j, k)] = state[cell++];
    }
  }
  time_ = c.time;
  steps_ = c.steps;
  initial_totals_ = c.initial_totals;
}

}  // namespace korch::hydro
