// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A leaf's guard-fill plan (docs/adaptive-mesh.md, "Guard cells across levels"): where each guard
// cell's value comes from, worked out once through the forest's lookups and replayed by later fills.
// A value is a term (one leaf cell, or the mean of the 2^dims finer cells inside it) or a limited
// prolongation of such terms; the replay does the arithmetic of values_at in the same order, so a
// plan's fill and a cell-by-cell fill give the same bits. Cells a plan cannot express (a custom
// boundary, a prolongation whose coarse cells are coarser again, restriction over two levels) keep
// the cell-by-cell path.
#include "forest_fill_plan.hpp"

#include <korch/block_neighbours.hpp>

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace korch {

namespace {

// What term_of gives when a coarser leaf holds the cell, and when no term can say what it holds.
constexpr int kCoarser = -1, kNoTerm = -2;

using detail::floor_div;
using detail::minmod;

}  // namespace

ForestGuardFill::~ForestGuardFill() = default;

bool ForestGuardFill::plan_is_current(const LeafPlan& plan) const { return plan.generation == forest_.generation(); }

void ForestGuardFill::clear_blocks() {
  blocks_.clear();
  any_plan_ = false;
}

void ForestGuardFill::forget_plans() {
  if (!any_plan_.load(std::memory_order_acquire)) return;
  for (auto& entry : blocks_) {
    entry.second.plan.store(nullptr, std::memory_order_release);
    entry.second.owned.reset();
  }
  any_plan_.store(false, std::memory_order_release);
}

const ForestGuardFill::LeafPlan& ForestGuardFill::plan_of(const BlockKey& leaf, const LeafData& data) const {
  if (const LeafPlan* plan = data.plan.load(std::memory_order_acquire)) return *plan;
  std::lock_guard<std::mutex> lock(data.planning);
  if (const LeafPlan* plan = data.plan.load(std::memory_order_acquire)) return *plan;
  data.owned = make_plan(leaf);
  data.plan.store(data.owned.get(), std::memory_order_release);
  any_plan_.store(true, std::memory_order_release);
  return *data.owned;
}

std::unique_ptr<ForestGuardFill::LeafPlan> ForestGuardFill::make_plan(const BlockKey& leaf) const {
  auto plan = std::make_unique<LeafPlan>();
  plan->generation = forest_.generation();
  for (const Direction& d : NeighbourList::directions(forest_.shape().dims)) {
    std::array<int, 3> lo{0, 0, 0}, hi{1, 1, 1};
    for (int a = 0; a < 3; ++a) {
      lo[a] = d[a] < 0 ? -guard_[a] : d[a] > 0 ? cells_[a] : 0;
      hi[a] = d[a] < 0 ? 0 : d[a] > 0 ? cells_[a] + guard_[a] : cells_[a];
    }
    plan_region(leaf, lo, hi, *plan);
  }
  join_copy_rows(*plan);
  group_prolongations(*plan);
  return plan;
}

// Copies of one length from one leaf whose rows lie one step apart, in the leaf and in the source
// alike, become one copy of several rows (a face's rows, for one): fewer copies to walk per fill.
void ForestGuardFill::join_copy_rows(LeafPlan& plan) {
  std::vector<LeafPlan::Copy> joined;
  for (const LeafPlan::Copy& copy : plan.copies) {
    if (!joined.empty()) {
      LeafPlan::Copy& last = joined.back();
      const bool alike = last.count == copy.count && last.source.leaf == copy.source.leaf &&
                         last.source.var_stride == copy.source.var_stride;
      const std::ptrdiff_t step = copy.at - last.at;  // the step a second row would set
      if (alike && last.rows == 1 && step > 0 && copy.source.cell - last.source.cell == step) {
        last.rows = 2;
        last.step = step;
        continue;
      }
      const std::ptrdiff_t next = std::ptrdiff_t{last.rows} * last.step;
      if (alike && last.rows > 1 && copy.at - last.at == next && copy.source.cell - last.source.cell == next) {
        ++last.rows;
        continue;
      }
    }
    joined.push_back(copy);
  }
  plan.copies = std::move(joined);
}

// Prolongations from one coarse cell (the same first source of the centre term) become one with a
// target per fine guard cell: the replay finds the coarse cell's slopes once for all of them.
void ForestGuardFill::group_prolongations(LeafPlan& plan) {
  std::vector<LeafPlan::Op> means;
  std::unordered_map<const double*, std::size_t> group_of;
  std::vector<std::vector<LeafPlan::Target>> targets_of;
  for (const LeafPlan::Op& op : plan.ops) {
    if (op.slopes == 0) {
      means.push_back(op);
      continue;
    }
    const auto& centre = plan.terms[static_cast<std::size_t>(op.term)];
    const double* coarse_cell = plan.sources[static_cast<std::size_t>(centre.first)].cell;
    const auto found = group_of.emplace(coarse_cell, plan.prolongations.size());
    if (found.second) {
      plan.prolongations.push_back({op.term, op.slopes, 0, 0});
      targets_of.emplace_back();
    }
    targets_of[found.first->second].push_back({op.at, op.above});
  }
  for (std::size_t g = 0; g < plan.prolongations.size(); ++g) {
    plan.prolongations[g].first_target = static_cast<int>(plan.targets.size());
    plan.prolongations[g].targets = static_cast<int>(targets_of[g].size());
    plan.targets.insert(plan.targets.end(), targets_of[g].begin(), targets_of[g].end());
  }
  plan.ops = std::move(means);
}

// The region's cells are visited with the array's smallest stride innermost, so that copies of
// consecutive cells from consecutive cells join into one run.
void ForestGuardFill::plan_region(const BlockKey& leaf, const std::array<int, 3>& lo, const std::array<int, 3>& hi,
                                  LeafPlan& plan) const {
  const BlockArray& array = leaf_array(leaf);
  std::array<int, 3> axis{0, 1, 2};  // outermost first
  std::sort(axis.begin(), axis.end(), [&](int a, int b) { return array.stride[a + 1] > array.stride[b + 1]; });
  std::array<int, 3> c{};
  for (c[axis[0]] = lo[axis[0]]; c[axis[0]] < hi[axis[0]]; ++c[axis[0]])
    for (c[axis[1]] = lo[axis[1]]; c[axis[1]] < hi[axis[1]]; ++c[axis[1]])
      for (c[axis[2]] = lo[axis[2]]; c[axis[2]] < hi[axis[2]]; ++c[axis[2]]) {
        const Cell cell{leaf.position[0] * cells_[0] + c[0], leaf.position[1] * cells_[1] + c[1],
                        leaf.position[2] * cells_[2] + c[2]};
        std::ptrdiff_t at = 0;
        for (int a = 0; a < 3; ++a) at += (c[a] + guard_[a]) * array.stride[a + 1];
        plan_guard_cell(leaf.level, cell, at, plan);
      }
}

void ForestGuardFill::plan_guard_cell(int level, const Cell& cell, std::ptrdiff_t at, LeafPlan& plan) const {
  const std::size_t ops = plan.ops.size(), terms = plan.terms.size(), sources = plan.sources.size();
  const auto drop_new_terms = [&] {
    plan.ops.resize(ops);
    plan.terms.resize(terms);
    plan.sources.resize(sources);
  };
  if (!plan_cell(level, cell, plan)) {
    drop_new_terms();
    plan.slow.push_back({at, cell});
    return;
  }
  LeafPlan::Op& op = plan.ops[ops];
  const Term& term = plan.terms[static_cast<std::size_t>(op.term)];
  if (op.slopes != 0 || term.count != 1) {
    op.at = at;
    return;
  }
  // A copy: kept apart, its source inline, joined to the previous copy when both continue it.
  const LeafPlan::Source source = plan.sources[static_cast<std::size_t>(term.first)];
  drop_new_terms();
  if (!plan.copies.empty()) {
    LeafPlan::Copy& last = plan.copies.back();
    if (last.at + last.count == at && last.source.cell + last.count == source.cell &&
        last.source.var_stride == source.var_stride) {
      ++last.count;
      return;
    }
  }
  plan.copies.push_back({at, source, 1});
}

// The guard cell `cell` of `level` as any_values then values_at find it: one op, or false.
bool ForestGuardFill::plan_cell(int level, Cell cell, LeafPlan& plan) const {
  if (!wrap_or_clamp(level, cell)) return false;
  const auto& shape = forest_.shape();
  const int same = term_of(level, cell, plan);
  if (same == kNoTerm) return false;
  if (same >= 0) {
    plan.ops.push_back({0, same, 0, 0});
    return true;
  }
  // A coarser leaf holds the cell: its coarse cell and the neighbours the slopes read.
  Cell coarse = cell;
  for (int a = 0; a < shape.dims; ++a) coarse[a] = floor_div(cell[a], 2);
  const int centre = term_of(level - 1, coarse, plan);
  if (centre < 0) return false;
  unsigned above = 0;
  for (int a = 0; a < shape.dims; ++a) {
    Cell lo = coarse, hi = coarse;
    --lo[a];
    ++hi[a];
    if (any_term_of(level - 1, hi, plan) < 0 || any_term_of(level - 1, lo, plan) < 0) return false;
    if (cell[a] - 2 * coarse[a] != 0) above |= 1u << a;
  }
  plan.ops.push_back({0, centre, shape.dims, above});
  return true;
}

// A cell inside the domain (periodic axes wrapped by the caller or here) as one term: the leaf cell
// itself or the mean of finer leaf cells; kCoarser when a coarser leaf holds it, kNoTerm when the
// finer cells are split again.
int ForestGuardFill::term_of(int level, const Cell& cell, LeafPlan& plan) const {
  const auto& shape = forest_.shape();
  BlockKey key{level, {}};
  Cell inside{};
  for (int a = 0; a < 3; ++a) {
    key.position[a] = floor_div(cell[a], cells_[a]);
    const std::int64_t local = cell[a] - key.position[a] * cells_[a];
    if (a < shape.dims && shape.periodic[a]) {
      const std::int64_t n = std::int64_t{shape.roots[a]} << level;
      key.position[a] = ((key.position[a] % n) + n) % n;
    }
    inside[a] = key.position[a] * cells_[a] + local;
  }
  const int first = static_cast<int>(plan.sources.size());
  if (forest_.is_leaf(key)) {
    if (!direct_source(level, inside, plan)) return kNoTerm;
    plan.terms.push_back({first, 1});
    return static_cast<int>(plan.terms.size()) - 1;
  }
  if (!forest_.contains(key)) return kCoarser;
  const int n = 1 << shape.dims;
  for (int c = 0; c < n; ++c) {
    Cell fine = inside;
    for (int a = 0; a < shape.dims; ++a) fine[a] = 2 * inside[a] + ((c >> a) & 1);
    if (!direct_source(level + 1, fine, plan)) {
      plan.sources.resize(static_cast<std::size_t>(first));
      return kNoTerm;
    }
  }
  plan.terms.push_back({first, n});
  return static_cast<int>(plan.terms.size()) - 1;
}

// As any_values: the cell wrapped or clamped, then its term.
int ForestGuardFill::any_term_of(int level, Cell cell, LeafPlan& plan) const {
  return wrap_or_clamp(level, cell) ? term_of(level, cell, plan) : kNoTerm;
}

// Periodic axes wrap, outflow takes the nearest cell inside; false for a cell beyond an edge with a
// custom boundary (a plan has no term for it).
bool ForestGuardFill::wrap_or_clamp(int level, Cell& cell) const {
  const auto& shape = forest_.shape();
  for (int a = 0; a < shape.dims; ++a) {
    const std::int64_t n = std::int64_t{shape.roots[a]} * cells_[a] << level;
    if (shape.periodic[a]) cell[a] = ((cell[a] % n) + n) % n;
    if (cell[a] < 0 || cell[a] >= n) {
      if (!outflow_) return false;
      cell[a] = std::clamp<std::int64_t>(cell[a], 0, n - 1);
    }
  }
  return true;
}

// A cell of a leaf (position already wrapped) as a source; false when no leaf of `level` holds it.
bool ForestGuardFill::direct_source(int level, const Cell& cell, LeafPlan& plan) const {
  BlockKey key{level, {}};
  Cell local{};
  for (int a = 0; a < 3; ++a) {
    key.position[a] = floor_div(cell[a], cells_[a]);
    local[a] = cell[a] - key.position[a] * cells_[a];
  }
  if (!forest_.is_leaf(key)) return false;
  const BlockArray& a = leaf_array(key);
  std::ptrdiff_t offset = 0;
  for (int d = 0; d < 3; ++d) offset += (local[d] + guard_[d]) * a.stride[d + 1];
  plan.sources.push_back({a.data + offset, a.stride[0], a.data});
  return true;
}

void ForestGuardFill::replay(const LeafPlan& plan, const BlockKey& leaf, const BlockArray& array, int first_var,
                             int end_var) const {
  const auto term_value = [&plan](int t, int var) {
    const Term& term = plan.terms[static_cast<std::size_t>(t)];
    const LeafPlan::Source* s = &plan.sources[static_cast<std::size_t>(term.first)];
    if (term.count == 1) return s->cell[var * s->var_stride];
    double sum = 0.0;  // as restricted_values: summed in child order, then divided
    for (int c = 0; c < term.count; ++c) sum += s[c].cell[var * s[c].var_stride];
    return sum / term.count;
  };
  // Variable by variable: each pass reads and writes one variable's arrays.
  for (int var = first_var; var < end_var; ++var) {
    double* out = array.data + var * array.stride[0];
    for (const LeafPlan::Copy& copy : plan.copies) {
      const double* from = copy.source.cell + var * copy.source.var_stride;
      double* to = out + copy.at;
      for (int r = 0; r < copy.rows; ++r, from += copy.step, to += copy.step)
        for (int n = 0; n < copy.count; ++n) to[n] = from[n];  // mostly a few cells: no call
    }
    for (const LeafPlan::Op& op : plan.ops) out[op.at] = term_value(op.term, var);
    for (const LeafPlan::Prolongation& p : plan.prolongations) {
      const double centre = term_value(p.term, var);
      double slope[3] = {0.0, 0.0, 0.0};
      for (int a = 0; a < p.slopes; ++a) {
        const double hi = term_value(p.term + 1 + 2 * a, var), lo = term_value(p.term + 2 + 2 * a, var);
        slope[a] = minmod(hi - centre, centre - lo);
      }
      // As prolonged_values: the centre, then each axis's slope times the quarter offset in turn.
      for (int t = p.first_target; t < p.first_target + p.targets; ++t) {
        const LeafPlan::Target& target = plan.targets[static_cast<std::size_t>(t)];
        double value = centre;
        for (int a = 0; a < p.slopes; ++a) value += slope[a] * ((target.above >> a) & 1u ? 0.25 : -0.25);
        out[target.at] = value;
      }
    }
  }
  if (plan.slow.empty()) return;
  std::vector<double> values(static_cast<std::size_t>(n_vars_));
  LastLeaf last;
  for (const LeafPlan::Slow& cell : plan.slow) {
    any_values(leaf.level, cell.cell, values.data(), last);
    for (int var = first_var; var < end_var; ++var)
      array.data[var * array.stride[0] + cell.at] = values[static_cast<std::size_t>(var)];
  }
}

}  // namespace korch
