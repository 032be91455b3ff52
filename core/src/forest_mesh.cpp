// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/error.hpp>
#include <korch/forest_mesh.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace korch {

ForestMesh::ForestMesh(std::string name, const ForestMeshShape& shape)
    : name_(std::move(name)), shape_(shape), forest_(shape.forest) {
  for (int a = 0; a < shape.forest.dims; ++a)
    if (!(shape.domain_hi[a] > shape.domain_lo[a]))
      throw Error(
          fmt::format("ForestMesh '{}': domain_hi[{}] = {} is not above domain_lo[{}] = {}; give the "
                      "domain's low and high corners",
                      name_, a, shape.domain_hi[a], a, shape.domain_lo[a]));
  fill_ = std::make_unique<ForestGuardFill>(forest_, shape.cells, shape.guard, shape.n_vars);
  for (const BlockKey& leaf : forest_.leaves()) data_[leaf] = fresh_block();
  list_leaves();
}

std::vector<double> ForestMesh::fresh_block() const {
  std::size_t n = static_cast<std::size_t>(shape_.n_vars);
  for (int a = 0; a < 3; ++a) n *= static_cast<std::size_t>(shape_.cells[a] + 2 * shape_.guard[a]);
  return std::vector<double>(n, 0.0);
}

BlockArray ForestMesh::array_of(std::vector<double>& data) const {
  const std::ptrdiff_t ni = shape_.cells[0] + 2 * shape_.guard[0], nj = shape_.cells[1] + 2 * shape_.guard[1],
                       nk = shape_.cells[2] + 2 * shape_.guard[2];
  return BlockArray::of(data.data(), IndexOrder::i_j_k_var, {ni, nj, nk, shape_.n_vars},
                        {1, ni, ni * nj, ni * nj * nk});
}

std::array<double, 3> ForestMesh::cell_size(int level) const {
  std::array<double, 3> h{1, 1, 1};
  for (int a = 0; a < shape_.forest.dims; ++a)
    h[a] = (shape_.domain_hi[a] - shape_.domain_lo[a]) /
           (static_cast<double>(shape_.forest.roots[a]) * shape_.cells[a] * static_cast<double>(1 << level));
  return h;
}

void ForestMesh::list_leaves() {
  fill_->clear_blocks();
  arrays_.clear();
  faces_.clear();
  auto blocks = std::make_unique<BlockList>(name_, shape_.n_vars);
  for (const BlockKey& leaf : forest_.leaves()) {
    const BlockArray a = array_of(data_.at(leaf));
    fill_->set_block(leaf, a);
    arrays_.push_back(a);
    for (int axis = 0; axis < shape_.forest.dims; ++axis) {
      std::size_t n = static_cast<std::size_t>(shape_.n_vars);
      for (int other = 0; other < 3; ++other)
        if (other != axis) n *= static_cast<std::size_t>(shape_.cells[other]);
      faces_.insert(faces_.end(), 2, std::vector<double>(n, 0.0));
    }
    BlockShape s;
    s.cells = shape_.cells;
    s.guard = shape_.guard;
    s.level = leaf.level;
    s.delta = cell_size(leaf.level);
    for (int d = 0; d < 3; ++d) {
      s.index[d] = static_cast<int>(leaf.position[d]);
      s.lo_coord[d] = shape_.domain_lo[d] + static_cast<double>(leaf.position[d] * shape_.cells[d]) * s.delta[d];
    }
    blocks->add(s, a);
  }
  blocks_ = std::move(blocks);
}

const BlockArray& ForestMesh::array(int block) const {
  if (block < 0 || block >= static_cast<int>(arrays_.size()))
    throw Error(
        fmt::format("ForestMesh '{}': block {} of {} leaves; give an id of blocks()", name_, block, arrays_.size()));
  return arrays_[static_cast<std::size_t>(block)];
}

void ForestMesh::set(const Function& f) {
  for (std::size_t b = 0; b < arrays_.size(); ++b) {
    const BlockMeta& meta = blocks_->block(static_cast<int>(b));
    const BlockArray& a = arrays_[b];
    for (int v = 0; v < shape_.n_vars; ++v)
      for (int k = 0; k < shape_.cells[2]; ++k)
        for (int j = 0; j < shape_.cells[1]; ++j)
          for (int i = 0; i < shape_.cells[0]; ++i) {
            const std::array<int, 3> ijk{i, j, k};
            std::array<double, 3> x{};
            for (int d = 0; d < 3; ++d) x[d] = meta.lo_coord[d] + (ijk[d] + 0.5) * meta.delta[d];
            a.data[v * a.stride[0] + (i + shape_.guard[0]) * a.stride[1] + (j + shape_.guard[1]) * a.stride[2] +
                   (k + shape_.guard[2]) * a.stride[3]] = f(x, v);
          }
  }
}

void ForestMesh::set_boundary(ForestGuardFill::BoundaryValue boundary) {
  boundary_ = boundary;
  fill_->set_boundary(std::move(boundary));
}

double ForestMesh::total(int var) const {
  double sum = 0.0;
  for (std::size_t b = 0; b < arrays_.size(); ++b) {
    const BlockMeta& meta = blocks_->block(static_cast<int>(b));
    const BlockArray& a = arrays_[b];
    double block_sum = 0.0;
    for (int k = 0; k < shape_.cells[2]; ++k)
      for (int j = 0; j < shape_.cells[1]; ++j)
        for (int i = 0; i < shape_.cells[0]; ++i)
          block_sum += a.data[var * a.stride[0] + (i + shape_.guard[0]) * a.stride[1] +
                              (j + shape_.guard[1]) * a.stride[2] + (k + shape_.guard[2]) * a.stride[3]];
    double volume = 1.0;
    for (int d = 0; d < shape_.forest.dims; ++d) volume *= meta.delta[d];
    sum += block_sum * volume;
  }
  return sum;
}

std::vector<double> ForestMesh::estimates(const std::vector<int>& vars, const LohnerOptions& lohner) const {
  std::vector<int> which = vars;
  if (which.empty()) {
    which.resize(static_cast<std::size_t>(shape_.n_vars));
    std::iota(which.begin(), which.end(), 0);
  }
  for (int v : which)
    if (v < 0 || v >= shape_.n_vars)
      throw Error(fmt::format("ForestMesh '{}': estimated variable {} outside 0 .. {}", name_, v, shape_.n_vars - 1));
  std::vector<double> e(arrays_.size(), 0.0);
  for (std::size_t b = 0; b < arrays_.size(); ++b)
    for (int v : which)
      e[b] = std::max(e[b], lohner_estimate(arrays_[b], shape_.forest.dims, shape_.cells, shape_.guard, v, lohner));
  return e;
}

RegridCounts ForestMesh::regrid(const RegridOptions& options) {
  if (!(options.derefine_below < options.refine_above))
    throw Error(
        fmt::format("ForestMesh '{}': derefine_below = {} is not below refine_above = {}; a leaf would be "
                    "flagged both ways",
                    name_, options.derefine_below, options.refine_above));
  fill_guard_cells();
  const std::vector<double> e = estimates(options.vars, options.lohner);
  const auto& leaves = forest_.leaves();
  std::vector<int> refine_ids, coarsen_ids;
  for (int b = 0; b < static_cast<int>(leaves.size()); ++b) {
    if (e[static_cast<std::size_t>(b)] > options.refine_above) refine_ids.push_back(b);
    if (e[static_cast<std::size_t>(b)] < options.derefine_below && leaves[static_cast<std::size_t>(b)].level > 0)
      coarsen_ids.push_back(b);
  }
  if (options.max_leaves > 0) {
    // Largest estimates first, as many as the budget holds (balance may split a few more).
    std::stable_sort(refine_ids.begin(), refine_ids.end(),
                     [&](int a, int b) { return e[static_cast<std::size_t>(a)] > e[static_cast<std::size_t>(b)]; });
    const int added = (1 << shape_.forest.dims) - 1;
    const int room = std::max(0, (options.max_leaves - forest_.n_leaves()) / added);
    if (static_cast<int>(refine_ids.size()) > room) refine_ids.resize(static_cast<std::size_t>(room));
  }
  std::vector<BlockKey> refine, coarsen;
  for (int b : refine_ids) refine.push_back(leaves[static_cast<std::size_t>(b)]);
  for (int b : coarsen_ids) coarsen.push_back(leaves[static_cast<std::size_t>(b)]);
  return adapt(refine, coarsen);
}

RegridCounts ForestMesh::adapt(const std::vector<BlockKey>& refine, const std::vector<BlockKey>& coarsen) {
  for (const BlockKey& k : coarsen) forest_.leaf_index(k);
  const BlockForest before = forest_;
  RegridCounts counts;
  counts.refined = forest_.refine(refine);
  std::vector<BlockKey> still_leaves;
  for (const BlockKey& k : coarsen)
    if (forest_.is_leaf(k) && k.level > 0) still_leaves.push_back(k);
  counts.derefined = forest_.derefine(still_leaves);
  counts.leaves = forest_.n_leaves();
  if (counts.refined == 0 && counts.derefined == 0) return counts;

  // New leaves take the old composite mesh's values: copies, means of finer cells, or limited
  // prolongation from coarser ones, each of which keeps every coarse cell's mean. A kept leaf's
  // vector moves to the new map with its buffer, so old_fill may still read it.
  ForestGuardFill old_fill(before, shape_.cells, shape_.guard, shape_.n_vars);
  if (boundary_) old_fill.set_boundary(boundary_);
  for (const BlockKey& leaf : before.leaves()) old_fill.set_block(leaf, array_of(data_.at(leaf)));
  std::unordered_map<BlockKey, std::vector<double>, BlockKeyHash> data;
  for (const BlockKey& leaf : forest_.leaves()) {
    const auto kept = data_.find(leaf);
    if (kept != data_.end() && before.is_leaf(leaf)) {
      data[leaf] = std::move(kept->second);
      continue;
    }
    std::vector<double>& fresh = data[leaf] = fresh_block();
    const BlockArray a = array_of(fresh);
    for (int v = 0; v < shape_.n_vars; ++v)
      for (int k = 0; k < shape_.cells[2]; ++k)
        for (int j = 0; j < shape_.cells[1]; ++j)
          for (int i = 0; i < shape_.cells[0]; ++i) {
            const ForestGuardFill::Cell cell{leaf.position[0] * shape_.cells[0] + i,
                                             leaf.position[1] * shape_.cells[1] + j,
                                             leaf.position[2] * shape_.cells[2] + k};
            a.data[v * a.stride[0] + (i + shape_.guard[0]) * a.stride[1] + (j + shape_.guard[1]) * a.stride[2] +
                   (k + shape_.guard[2]) * a.stride[3]] = old_fill.value_at(leaf.level, cell, v);
          }
  }
  data_ = std::move(data);
  list_leaves();
  fill_guard_cells();
  return counts;
}

}  // namespace korch
