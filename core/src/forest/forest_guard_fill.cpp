// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "forest_fill_plan.hpp"

#include <korch/error.hpp>
#include <korch/block_neighbours.hpp>
#include <korch/forest_guard_fill.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace korch {

namespace {

using detail::floor_div;
using detail::minmod;

// One value per variable, on the stack for the usual few variables: the fill's recursion
// (restriction, prolongation) needs one such set per level it descends.
class VarValues {
 public:
  explicit VarValues(int n) : heap_(n > kInline ? static_cast<std::size_t>(n) : 0) {}
  VarValues(const VarValues&) = delete;
  VarValues& operator=(const VarValues&) = delete;
  double* data() noexcept { return heap_.empty() ? inline_.data() : heap_.data(); }

 private:
  static constexpr int kInline = 16;
  std::array<double, kInline> inline_{};
  std::vector<double> heap_;
};

}  // namespace

ForestGuardFill::ForestGuardFill(const BlockForest& forest, std::array<int, 3> cells, std::array<int, 3> guard,
                                 int n_vars)
    : forest_(forest), cells_(cells), guard_(guard), n_vars_(n_vars) {
  const int dims = forest.shape().dims;
  for (int a = 0; a < 3; ++a) {
    const bool used = a < dims;
    if ((used && (cells[a] < 1 || guard[a] < 0)) || (!used && (cells[a] != 1 || guard[a] != 0)))
      throw Error(
          fmt::format("ForestGuardFill: cells[{}] = {}, guard[{}] = {} in a {}-D forest; give at least 1 "
                      "cell and 0 or more guard cells along the first {} axes, 1 cell and 0 guard cells "
                      "beyond",
                      a, cells[a], a, guard[a], dims, dims));
  }
  if (n_vars < 1) throw Error(fmt::format("ForestGuardFill: n_vars = {}; give 1 or more variables", n_vars));
  boundary_ = outflow_boundary();
}

// Outflow: the nearest cell of the level inside the domain (any_values takes it for every variable at
// once, without this function).
ForestGuardFill::BoundaryValue ForestGuardFill::outflow_boundary() {
  return [this](int level, const Cell& cell, int var) {
    Cell inside = cell;
    for (int a = 0; a < forest_.shape().dims; ++a) {
      const std::int64_t n = std::int64_t{forest_.shape().roots[a]} * cells_[a] << level;
      inside[a] = std::clamp<std::int64_t>(cell[a], 0, n - 1);
    }
    return value_at(level, inside, var);
  };
}

void ForestGuardFill::set_boundary(BoundaryValue boundary) {
  outflow_ = !boundary;
  boundary_ = boundary ? std::move(boundary) : outflow_boundary();
  forget_plans();
}

void ForestGuardFill::set_block(const BlockKey& leaf, const BlockArray& array) {
  forest_.leaf_index(leaf);
  const std::array<std::ptrdiff_t, 4> want{n_vars_, cells_[0] + 2 * guard_[0], cells_[1] + 2 * guard_[1],
                                           cells_[2] + 2 * guard_[2]};
  if (array.data == nullptr || array.extent != want)
    throw Error(
        fmt::format("ForestGuardFill: the array of {} has extents (var, i, j, k) = ({}, {}, {}, {}) at {}; "
                    "every block holds ({}, {}, {}, {}) (variables, then cells + 2 * guard cells per axis) "
                    "and non-null data",
                    leaf.describe(), array.extent[0], array.extent[1], array.extent[2], array.extent[3],
                    static_cast<const void*>(array.data), want[0], want[1], want[2], want[3]));
  forget_plans();  // they may read this leaf's old array
  blocks_[leaf].array = array;
}

const BlockArray& ForestGuardFill::leaf_array(const BlockKey& leaf) const {
  const auto it = blocks_.find(leaf);
  if (it == blocks_.end())
    throw Error(
        fmt::format("ForestGuardFill: the leaf {} has no data; call set_block for every leaf of the forest "
                    "before fill",
                    leaf.describe()));
  return it->second.array;
}

double ForestGuardFill::value_at(int level, const Cell& cell, int var) const {
  if (var < 0 || var >= n_vars_)
    throw Error(fmt::format("ForestGuardFill::value_at: variable {} of {}; give 0 .. {}", var, n_vars_, n_vars_ - 1));
  VarValues values(n_vars_);
  values_at(level, cell, values.data());
  return values.data()[var];
}

void ForestGuardFill::values_at(int level, const Cell& cell, double* out) const {
  LastLeaf last;
  values_at(level, cell, out, last);
}

void ForestGuardFill::values_at(int level, const Cell& cell, double* out, LastLeaf& last) const {
  BlockKey key{level, {}};
  Cell local{};
  for (int a = 0; a < 3; ++a) {
    key.position[a] = floor_div(cell[a], cells_[a]);
    local[a] = cell[a] - key.position[a] * cells_[a];
  }
  BlockKey wrapped = key;
  const auto& shape = forest_.shape();
  for (int a = 0; a < shape.dims; ++a) {
    const std::int64_t n = std::int64_t{shape.roots[a]} << level;
    if (shape.periodic[a]) wrapped.position[a] = ((key.position[a] % n) + n) % n;
    if (wrapped.position[a] < 0 || wrapped.position[a] >= n)
      throw Error(
          fmt::format("ForestGuardFill::value_at: cell ({}, {}, {}) of level {} lies beyond the domain's "
                      "non-periodic edge along axis {}; give a cell inside it",
                      cell[0], cell[1], cell[2], level, a));
  }
  if (last.array == nullptr || !(last.key == wrapped)) {
    if (forest_.is_leaf(wrapped)) {
      last.key = wrapped;
      last.array = &leaf_array(wrapped);
    } else {
      Cell inside = cell;
      for (int a = 0; a < 3; ++a) inside[a] = wrapped.position[a] * cells_[a] + local[a];
      if (forest_.contains(wrapped))
        restricted_values(level, inside, out, last);
      else
        prolonged_values(level, inside, out, last);
      return;
    }
  }
  const BlockArray& a = *last.array;
  std::ptrdiff_t offset = 0;
  for (int d = 0; d < 3; ++d) offset += (local[d] + guard_[d]) * a.stride[d + 1];
  for (int var = 0; var < n_vars_; ++var) out[var] = a.data[offset + var * a.stride[0]];
}

void ForestGuardFill::any_values(int level, Cell cell, double* out, LastLeaf& last) const {
  const auto& shape = forest_.shape();
  bool beyond = false;
  for (int a = 0; a < shape.dims; ++a) {
    const std::int64_t n = std::int64_t{shape.roots[a]} * cells_[a] << level;
    if (shape.periodic[a]) cell[a] = ((cell[a] % n) + n) % n;
    if (cell[a] < 0 || cell[a] >= n) {
      beyond = true;
      if (outflow_) cell[a] = std::clamp<std::int64_t>(cell[a], 0, n - 1);  // the nearest cell inside
    }
  }
  if (beyond && !outflow_) {
    for (int var = 0; var < n_vars_; ++var) out[var] = boundary_(level, cell, var);
    return;
  }
  values_at(level, cell, out, last);
}

void ForestGuardFill::restricted_values(int level, const Cell& cell, double* out, LastLeaf& last) const {
  const int dims = forest_.shape().dims;
  const int n = 1 << dims;
  VarValues fine_values(n_vars_);
  double* fine_value = fine_values.data();
  for (int var = 0; var < n_vars_; ++var) out[var] = 0.0;
  for (int c = 0; c < n; ++c) {
    Cell fine = cell;
    for (int a = 0; a < dims; ++a) fine[a] = 2 * cell[a] + ((c >> a) & 1);
    values_at(level + 1, fine, fine_value, last);
    for (int var = 0; var < n_vars_; ++var) out[var] += fine_value[var];
  }
  for (int var = 0; var < n_vars_; ++var) out[var] /= n;
}

void ForestGuardFill::prolonged_values(int level, const Cell& cell, double* out, LastLeaf& last) const {
  const int dims = forest_.shape().dims;
  Cell coarse = cell;
  for (int a = 0; a < dims; ++a) coarse[a] = floor_div(cell[a], 2);
  VarValues centre_values(n_vars_), hi_values(n_vars_), lo_values(n_vars_);
  double* centre = centre_values.data();
  double* hi_value = hi_values.data();
  double* lo_value = lo_values.data();
  values_at(level - 1, coarse, centre, last);
  for (int var = 0; var < n_vars_; ++var) out[var] = centre[var];
  for (int a = 0; a < dims; ++a) {
    Cell lo = coarse, hi = coarse;
    --lo[a];
    ++hi[a];
    any_values(level - 1, hi, hi_value, last);
    any_values(level - 1, lo, lo_value, last);
    // The fine cell's centre sits a quarter of a coarse cell below or above the coarse centre.
    const double offset = cell[a] - 2 * coarse[a] == 0 ? -0.25 : 0.25;
    for (int var = 0; var < n_vars_; ++var)
      out[var] += minmod(hi_value[var] - centre[var], centre[var] - lo_value[var]) * offset;
  }
}

// The guard cells of a leaf, one region per direction (a face, edge or corner of the block): by
// the leaf's plan while the forest is the one it was made for, else cell by cell.
void ForestGuardFill::fill_block(const BlockKey& leaf, const LeafData& data, Vars vars) const {
  const LeafPlan& plan = plan_of(leaf, data);
  if (plan_is_current(plan)) {
    replay(plan, leaf, data.array, vars.first, vars.end);
    return;
  }
  for (const Direction& d : NeighbourList::directions(forest_.shape().dims)) {
    std::array<int, 3> lo{0, 0, 0}, hi{1, 1, 1};
    for (int a = 0; a < 3; ++a) {
      lo[a] = d[a] < 0 ? -guard_[a] : d[a] > 0 ? cells_[a] : 0;
      hi[a] = d[a] < 0 ? 0 : d[a] > 0 ? cells_[a] + guard_[a] : cells_[a];
    }
    fill_region(leaf, data.array, lo, hi, vars);
  }
}

void ForestGuardFill::fill_region(const BlockKey& leaf, const BlockArray& array, const std::array<int, 3>& lo,
                                  const std::array<int, 3>& hi, Vars vars) const {
  Cell origin{};
  for (int a = 0; a < 3; ++a) origin[a] = leaf.position[a] * cells_[a];
  VarValues values(n_vars_);
  LastLeaf last;
  for (int k = lo[2]; k < hi[2]; ++k)
    for (int j = lo[1]; j < hi[1]; ++j)
      for (int i = lo[0]; i < hi[0]; ++i) {
        const Cell cell{origin[0] + i, origin[1] + j, origin[2] + k};
        any_values(leaf.level, cell, values.data(), last);
        const std::ptrdiff_t at =
            (i + guard_[0]) * array.stride[1] + (j + guard_[1]) * array.stride[2] + (k + guard_[2]) * array.stride[3];
        for (int var = vars.first; var < vars.end; ++var) array.data[var * array.stride[0] + at] = values.data()[var];
      }
}

void ForestGuardFill::fill() const { fill(forest_.leaves()); }

void ForestGuardFill::fill(const std::vector<BlockKey>& leaves) const {
  for (const auto& entry : blocks_)
    if (!forest_.is_leaf(entry.first))
      throw Error(
          fmt::format("ForestGuardFill: {} has data but is no longer a leaf of the forest; after a refine or "
                      "derefine call clear_blocks() and set_block for every leaf",
                      entry.first.describe()));
  for (const BlockKey& leaf : leaves) {
    const auto it = blocks_.find(leaf);
    if (it == blocks_.end())
      throw Error(
          fmt::format("ForestGuardFill: the leaf {} has no data; call set_block for every leaf of the "
                      "forest before fill",
                      leaf.describe()));
    fill_block(leaf, it->second, Vars{0, n_vars_});
  }
}

void ForestGuardFill::fill_leaf(const BlockKey& leaf, int first_var, int n_vars) const {
  const int end = n_vars < 0 ? n_vars_ : first_var + n_vars;
  if (first_var < 0 || end > n_vars_ || first_var >= end)
    throw Error(fmt::format("ForestGuardFill::fill_leaf: variables {} .. {} of {}; give a range within 0 .. {}",
                            first_var, end - 1, n_vars_, n_vars_ - 1));
  leaf_array(leaf);  // names a leaf without data
  fill_block(leaf, blocks_.find(leaf)->second, Vars{first_var, end});
}

}  // namespace korch
