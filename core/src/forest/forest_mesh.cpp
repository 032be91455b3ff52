// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "forest_ghosts.hpp"
#include "forest_ranks.hpp"

#include <korch/error.hpp>
#include <korch/forest_mesh.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

namespace korch {

ForestMesh::ForestMesh(std::string name, const ForestMeshShape& shape, const Communicator& comm)
    : name_(std::move(name)), shape_(shape), comm_(comm), forest_(shape.forest) {
  for (int a = 0; a < shape.forest.dims; ++a) {
    if (!(shape.domain_hi[a] > shape.domain_lo[a]))
      throw Error(
          fmt::format("ForestMesh '{}': domain_hi[{}] = {} is not above domain_lo[{}] = {}; give the "
                      "domain's low and high corners",
                      name_, a, shape.domain_hi[a], a, shape.domain_lo[a]));
    if (comm.size() > 1 && 2 * shape.guard[a] > shape.cells[a])
      throw Error(
          fmt::format("ForestMesh '{}': {} guard cells along axis {} for blocks of {} cells on {} ranks; on "
                      "ranks give at most half a block of guard cells",
                      name_, shape.guard[a], a, shape.cells[a], comm.size()));
  }
  fill_ = std::make_unique<ForestGuardFill>(forest_, shape.cells, shape.guard, shape.n_vars);
  ghosts_ = std::make_unique<detail::ForestGhosts>(comm_, "ForestMesh '" + name_ + "'");
  owners_ = detail::morton_partition(forest_.n_leaves(), comm_.size());
  for (int i = 0; i < forest_.n_leaves(); ++i)
    if (owners_[static_cast<std::size_t>(i)] == comm_.rank())
      data_[forest_.leaves()[static_cast<std::size_t>(i)]] = fresh_block();
  list_leaves();
}

std::array<int, 3> ForestMesh::stored_cells() const {
  return {shape_.cells[0] + 2 * shape_.guard[0], shape_.cells[1] + 2 * shape_.guard[1],
          shape_.cells[2] + 2 * shape_.guard[2]};
}

std::vector<double> ForestMesh::fresh_block() const {
  std::size_t n = static_cast<std::size_t>(shape_.n_vars);
  for (int a = 0; a < 3; ++a) n *= static_cast<std::size_t>(shape_.cells[a] + 2 * shape_.guard[a]);
  return std::vector<double>(n, 0.0);
}

BlockArray ForestMesh::array_of(std::vector<double>& data) const {
  const std::ptrdiff_t ni = shape_.cells[0] + 2 * shape_.guard[0], nj = shape_.cells[1] + 2 * shape_.guard[1],
                       nk = shape_.cells[2] + 2 * shape_.guard[2];
  // korch::Grid's layout: each variable an (i, j, k) array with k fastest, so that kernels written
  // for the grid's blocks (LayoutRight Views) run on the mesh's leaves as they are.
  return BlockArray::of(data.data(), IndexOrder::var_i_j_k, {shape_.n_vars, ni, nj, nk},
                        {ni * nj * nk, nj * nk, nk, 1});
}

std::array<double, 3> ForestMesh::cell_size(int level) const {
  std::array<double, 3> h{1, 1, 1};
  for (int a = 0; a < shape_.forest.dims; ++a)
    h[a] = (shape_.domain_hi[a] - shape_.domain_lo[a]) /
           (static_cast<double>(shape_.forest.roots[a]) * shape_.cells[a] * static_cast<double>(1 << level));
  return h;
}

void ForestMesh::list_leaves() {
  own_.clear();
  for (int i = 0; i < forest_.n_leaves(); ++i)
    if (owners_[static_cast<std::size_t>(i)] == comm_.rank())
      own_.push_back(forest_.leaves()[static_cast<std::size_t>(i)]);
  ghosts_->plan(forest_, owners_, own_, stored_cells(), shape_.n_vars);
  ++version_;
  fill_->clear_blocks();
  for (const auto& from : ghosts_->receives())
    for (const BlockKey& ghost : from) {
      auto& copy = data_[ghost];
      if (copy.empty()) copy = fresh_block();
      fill_->set_block(ghost, array_of(copy));
    }
  arrays_.clear();
  faces_.clear();
  face_neighbours_.clear();
  auto blocks = std::make_unique<BlockList>(name_, shape_.n_vars);
  for (const BlockKey& leaf : own_) {
    const BlockArray a = array_of(data_.at(leaf));
    fill_->set_block(leaf, a);
    arrays_.push_back(a);
    for (int axis = 0; axis < shape_.forest.dims; ++axis) {
      std::size_t n = static_cast<std::size_t>(shape_.n_vars);
      for (int other = 0; other < 3; ++other)
        if (other != axis) n *= static_cast<std::size_t>(shape_.cells[other]);
      faces_.insert(faces_.end(), 2, std::vector<double>(n, 0.0));
      for (int side = 0; side < 2; ++side) {
        Direction d{0, 0, 0};
        d[axis] = side == 0 ? -1 : 1;
        face_neighbours_.push_back(forest_.neighbours(leaf, d));
      }
    }
    BlockShape s;
    s.cells = shape_.cells;
    s.guard = shape_.guard;
    s.tile_cells = shape_.tile_cells;
    s.level = leaf.level;
    s.delta = cell_size(leaf.level);
    s.global_id = forest_.leaf_index(leaf);
    for (int d = 0; d < 3; ++d) {
      s.index[d] = static_cast<int>(leaf.position[d]);
      s.lo_coord[d] = shape_.domain_lo[d] + static_cast<double>(leaf.position[d] * shape_.cells[d]) * s.delta[d];
    }
    blocks->add(s, a);
  }
  blocks_ = std::move(blocks);
  ghosts_->limit(*fill_, own_);
}

void ForestMesh::fill_guard_cells() {
  exchange_ghost_leaves();
  fill_->fill(own_);
}

void ForestMesh::fill_guard_cells(int block, int first_var, int n_vars) const {
  array(block);  // names a bad block
  ghosts_->check_carried(block, first_var, n_vars < 0 ? shape_.n_vars : first_var + n_vars);
  fill_->fill_leaf(own_[static_cast<std::size_t>(block)], first_var, n_vars);
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
  ghosts_->limit(*fill_, own_);
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
  double all = 0.0;
  for (double part : comm_.all_gather(std::vector<double>{sum})) all += part;
  return all;
}

void ForestMesh::check_estimated(const std::vector<int>& vars) const {
  for (int v : vars)
    if (v < 0 || v >= shape_.n_vars)
      throw Error(fmt::format("ForestMesh '{}': estimated variable {} outside 0 .. {}", name_, v, shape_.n_vars - 1));
}

std::vector<double> ForestMesh::estimates(const std::vector<int>& vars, const LohnerOptions& lohner) const {
  check_estimated(vars);
  std::vector<double> e(arrays_.size(), 0.0);
  for (std::size_t b = 0; b < arrays_.size(); ++b) e[b] = estimate(static_cast<int>(b), vars, lohner);
  return e;
}

double ForestMesh::estimate(int block, const std::vector<int>& vars, const LohnerOptions& lohner, double enough) const {
  const BlockArray& a = array(block);
  check_estimated(vars);
  double e = 0.0;
  for (int v = 0; v < shape_.n_vars && !(e > enough); ++v)
    if (vars.empty() || std::find(vars.begin(), vars.end(), v) != vars.end())
      e = std::max(e, lohner_estimate(a, shape_.forest.dims, shape_.cells, shape_.guard, v, lohner, enough));
  return e;
}

double ForestMesh::regrid_estimate(int block, const RegridOptions& options) const {
  array(block);  // names a bad block
  const int level = own_leaves()[static_cast<std::size_t>(block)].level;
  // Below the finest level a leaf is refined past refine_above (whatever more it estimates); on it,
  // a leaf past derefine_below is kept. A budget orders leaves by their estimates: those count.
  const double cutoff = options.max_leaves > 0            ? std::numeric_limits<double>::infinity()
                        : level < shape_.forest.max_level ? options.refine_above
                                                          : options.derefine_below;
  return estimate(block, options.vars, options.lohner, cutoff);
}

// Collective: a rank's bad costs stop every rank's regrid (the others would wait in its messages).
void ForestMesh::check_costs(const RegridOptions& options) const {
  if (options.costs == nullptr) return;
  std::string why;
  if (options.costs->size() != own_.size())
    why = fmt::format("regrid given {} costs for this rank's {} leaves; give one per leaf of own_leaves()",
                      options.costs->size(), own_.size());
  for (std::size_t b = 0; why.empty() && b < own_.size(); ++b)
    if (!((*options.costs)[b] >= 0) || !std::isfinite((*options.costs)[b]))
      why = fmt::format("regrid given cost {} for block {}: give each leaf's measured cost, 0 or more",
                        (*options.costs)[b], b);
  if (why.empty() && !(options.rebalance_above >= 0))
    why = fmt::format(
        "rebalance_above is {}: give the imbalance to tolerate, 0 or more (0.1: the busiest rank 10 % above the mean)",
        options.rebalance_above);
  if (comm_.max(why.empty() ? 0 : 1) == 0) return;
  if (why.empty()) why = "another rank's regrid costs are refused (its error says why)";
  throw Error(fmt::format("ForestMesh '{}' on rank {}: {}", name_, comm_.rank(), why));
}

RegridCounts ForestMesh::regrid(const RegridOptions& options) {
  if (!(options.derefine_below < options.refine_above))
    throw Error(
        fmt::format("ForestMesh '{}': derefine_below = {} is not below refine_above = {}; a leaf would be "
                    "flagged both ways",
                    name_, options.derefine_below, options.refine_above));
  if (options.estimates != nullptr && options.estimates->size() != own_.size())
    throw Error(
        fmt::format("ForestMesh '{}': regrid given {} estimates for this rank's {} leaves; give one per "
                    "leaf of own_leaves()",
                    name_, options.estimates->size(), own_.size()));
  check_costs(options);
  if (!options.guard_cells_filled && options.estimates == nullptr) fill_guard_cells();
  std::vector<double> e;
  if (options.estimates != nullptr) {
    e = *options.estimates;
  } else {
    check_estimated(options.vars);
    for (int b = 0; b < static_cast<int>(own_.size()); ++b) e.push_back(regrid_estimate(b, options));
  }
  const auto& leaves = own_;
  std::vector<int> refine_ids, coarsen_ids;
  for (int b = 0; b < static_cast<int>(leaves.size()); ++b) {
    if (e[static_cast<std::size_t>(b)] > options.refine_above) refine_ids.push_back(b);
    if (e[static_cast<std::size_t>(b)] < options.derefine_below && leaves[static_cast<std::size_t>(b)].level > 0)
      coarsen_ids.push_back(b);
  }
  // Every rank's flags, in rank order, each with its leaf's estimate: every rank adapts the same
  // forest the same way.
  const auto gathered = [&](const std::vector<int>& ids) {
    std::vector<std::uint64_t> mine;
    for (int b : ids) {
      const BlockKey& k = own_[static_cast<std::size_t>(b)];
      std::uint64_t estimate = 0;
      std::memcpy(&estimate, &e[static_cast<std::size_t>(b)], sizeof estimate);
      mine.insert(mine.end(),
                  {static_cast<std::uint64_t>(k.level), static_cast<std::uint64_t>(k.position[0]),
                   static_cast<std::uint64_t>(k.position[1]), static_cast<std::uint64_t>(k.position[2]), estimate});
    }
    const auto all = comm_.all_gather(mine);
    std::vector<std::pair<double, BlockKey>> flagged;
    for (std::size_t n = 0; n + 4 < all.size(); n += 5) {
      double estimate = 0.0;
      std::memcpy(&estimate, &all[n + 4], sizeof estimate);
      flagged.push_back({estimate,
                         {static_cast<int>(all[n]),
                          {static_cast<std::int64_t>(all[n + 1]), static_cast<std::int64_t>(all[n + 2]),
                           static_cast<std::int64_t>(all[n + 3])}}});
    }
    return flagged;
  };
  auto refine = gathered(refine_ids);
  if (options.max_leaves > 0) {
    // Largest estimates first (Morton order among equals), as many as the budget holds; balance
    // may split a few more.
    std::stable_sort(refine.begin(), refine.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    const int added = (1 << shape_.forest.dims) - 1;
    const int room = std::max(0, (options.max_leaves - forest_.n_leaves()) / added);
    if (static_cast<int>(refine.size()) > room) refine.resize(static_cast<std::size_t>(room));
  }
  std::vector<BlockKey> refine_keys, coarsen_keys;
  for (const auto& f : refine) refine_keys.push_back(f.second);
  for (const auto& f : gathered(coarsen_ids)) coarsen_keys.push_back(f.second);
  if (options.costs == nullptr) return adapt(refine_keys, coarsen_keys, options.fill_afterwards);
  old_leaf_costs_ = comm_.all_gather(*options.costs);  // rank order is Morton order
  rebalance_above_ = options.rebalance_above;
  try {
    const RegridCounts counts = adapt(refine_keys, coarsen_keys, options.fill_afterwards);
    old_leaf_costs_.clear();
    return counts;
  } catch (...) {
    old_leaf_costs_.clear();
    throw;
  }
}

}  // namespace korch
