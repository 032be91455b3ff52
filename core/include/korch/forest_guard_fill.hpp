// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestGuardFill: the guard cells of every leaf of a BlockForest, filled across levels
// (docs/adaptive-mesh.md, "Guard cells across levels"). Each leaf's data is the code's own array
// (a BlockArray: any layout, strides in doubles) of cells + 2 * guard per axis and n_vars variables.
// A guard cell takes the value of the composite mesh at its place, read only from leaves' interior
// cells:
//   - a leaf of the same level holds the cell: its value;
//   - finer leaves hold it: the mean of the 2^dims finer cells inside it (restriction), recursively;
//   - a coarser leaf holds it: the coarse cell's value plus its limited slopes times the offset of
//     the fine cell's centre (prolongation; minmod of the one-sided differences per axis, so the
//     2^dims fine cells of a coarse cell average to it exactly, and linear data are reproduced);
//     the neighbouring coarse cells the slopes need are composite values too;
//   - beyond a non-periodic edge: the boundary value, by default the nearest cell inside the
//     domain at the same level (outflow, zero gradient); periodic axes wrap.
// Because only interior cells are read, the fill has no order: every leaf's guard cells can be
// filled independently, and filling twice gives the same bits. A leaf's first fill works out where
// each of its guard cells comes from (its plan: the cells it copies, averages or interpolates), and
// later fills replay that plan while the forest and the blocks' data stay as they are.
//
//   korch::ForestGuardFill fill(forest, {16, 16, 1}, {2, 2, 0}, 5);
//   for (const korch::BlockKey& leaf : forest.leaves()) fill.set_block(leaf, array_of(leaf));
//   fill.fill();
#pragma once

#include <korch/block_forest.hpp>
#include <korch/block_list.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace korch {

namespace detail {
class ForestDeviceFill;
}  // namespace detail

class ForestGuardFill {
 public:
  // A cell of a level: its index among all cells of that level along each axis (block position *
  // cells + local index); 0 beyond the forest's dims.
  using Cell = std::array<std::int64_t, 3>;
  // The value of variable `var` at `cell` of `level`, a cell beyond a non-periodic edge of the
  // domain (an index below 0 or at least the level's cells along such an axis).
  using BoundaryValue = std::function<double(int level, const Cell& cell, int var)>;

  // `cells` interior cells and `guard` guard cells per side of every block (1 and 0 beyond the
  // forest's dims), `n_vars` variables. Throws korch::Error for cells below 1 or guard cells below
  // 0 (or not 1 and 0 beyond dims), or n_vars below 1. The forest must outlive this object.
  ForestGuardFill(const BlockForest& forest, std::array<int, 3> cells, std::array<int, 3> guard, int n_vars);
  // The default boundary refers to this object: not copied or moved.
  ForestGuardFill(const ForestGuardFill&) = delete;
  ForestGuardFill& operator=(const ForestGuardFill&) = delete;

  // The data of a leaf. Throws korch::Error naming the leaf when it is not a leaf of the forest, when
  // the array is null, or its extents (var, i, j, k) are not (n_vars, cells + 2 * guard, ...).
  void set_block(const BlockKey& leaf, const BlockArray& array);
  // Forgets every leaf's data (after the forest changed).
  void clear_blocks();
  // Replaces the outflow rule beyond non-periodic edges; the function may call value_at for cells
  // inside the domain (a reflecting wall mirrors a cell and flips a sign). An empty function
  // restores the outflow rule.
  void set_boundary(BoundaryValue boundary);
  ~ForestGuardFill();

  // Fills the guard cells of every leaf. Throws korch::Error naming a leaf without data, or a key
  // with data that is no longer a leaf (the forest changed: clear_blocks and set_block anew).
  void fill() const;
  // The same for `leaves` only (a rank's own): the data of the leaves their guard cells read must be
  // set (ForestMesh on ranks sets copies of other ranks' leaves).
  void fill(const std::vector<BlockKey>& leaves) const;
  // The guard cells of one leaf, of variables first_var .. first_var + n_vars - 1 only (n_vars < 0:
  // through the last). It reads the other leaves' interior cells of those variables and writes only
  // this leaf's guard cells: fills of distinct leaves may run at the same time, also beside updates
  // that write other variables. Throws korch::Error as fill() does, and for a bad variable range.
  void fill_leaf(const BlockKey& leaf, int first_var = 0, int n_vars = -1) const;
  // The composite value of variable `var` at `cell` of `level` (inside the domain along non-periodic
  // axes; periodic ones wrap), from leaves' interior cells as above.
  double value_at(int level, const Cell& cell, int var) const;
  // The same for every variable at once into out[0 .. n_vars): the leaf is found once per cell.
  void values_at(int level, const Cell& cell, double* out) const;

  // A box of a leaf's stored cells, guard cells included: indices [lo, hi) along i, j and k.
  // `group` 2^dims: the fills read the box's cells only as means of the 2^dims cells inside a
  // coarser cell (the leaf is finer than the reader), so the box can travel as one sum per coarse
  // cell (docs/adaptive-mesh.md, "On ranks"); lo and hi are then even distances from the interior.
  struct Box {
    std::array<int, 3> lo{0, 0, 0}, hi{0, 0, 0};
    int group = 1;
    std::int64_t cells() const noexcept { return std::int64_t{hi[0] - lo[0]} * (hi[1] - lo[1]) * (hi[2] - lo[2]); }
    std::int64_t values() const noexcept { return cells() / group; }  // per variable, as it travels
    bool empty() const noexcept { return hi[0] <= lo[0] || hi[1] <= lo[1] || hi[2] <= lo[2]; }
  };
  // What some leaves' fills read of one leaf, as two boxes that a copy of it needs, written in turn:
  // `sums` (group 2^dims, or empty) holds the groups read through means, `cells` (group 1, or
  // empty) every cell read one by one. A group of `sums` that meets `cells` lies inside it, so the
  // cells written second leave each group whole: its sum or its cells. When one box costs no more
  // than two, or a block has an odd number of cells along an axis (a group may then straddle two
  // leaves), `cells` is the box of all and `sums` is empty.
  struct Read {
    Box sums, cells;
    Box bounds() const noexcept;  // the smallest box holding both, of single cells
  };
  using BoxesRead = std::unordered_map<BlockKey, Read, BlockKeyHash>;
  // What the fills of `leaves` read of the leaves they read, per leaf read (plans are made now
  // where missing). Empty when some guard cell has no plan (a custom boundary): a cell-by-cell fill
  // may read any cell nearby.
  std::optional<BoxesRead> cells_read(const std::vector<BlockKey>& leaves) const;

 private:
  friend class detail::ForestDeviceFill;  // runs the plans on the device (forest_device_fill.hpp)

  // The leaf the last lookup found: neighbouring guard cells mostly read the same leaf, so one
  // fill keeps it and skips the two hash lookups (is the key a leaf, where is its array).
  struct LastLeaf {
    BlockKey key;
    const BlockArray* array = nullptr;
  };
  void values_at(int level, const Cell& cell, double* out, LastLeaf& last) const;
  const BlockArray& leaf_array(const BlockKey& leaf) const;

  // Where a leaf's guard cells come from (forest_fill_plan.cpp), worked out by its first fill.
  struct LeafPlan;
  struct LeafData {
    BlockArray array;
    mutable std::mutex planning;                         // one thread works the plan out
    mutable std::atomic<const LeafPlan*> plan{nullptr};  // owned by `owned`
    mutable std::unique_ptr<LeafPlan> owned;
  };
  struct Term;
  const LeafPlan& plan_of(const BlockKey& leaf, const LeafData& data) const;
  std::unique_ptr<LeafPlan> make_plan(const BlockKey& leaf) const;
  static void join_copy_rows(LeafPlan& plan);
  static void group_prolongations(LeafPlan& plan);
  void plan_region(const BlockKey& leaf, const std::array<int, 3>& lo, const std::array<int, 3>& hi,
                   LeafPlan& plan) const;
  void plan_guard_cell(int level, const Cell& cell, std::ptrdiff_t at, LeafPlan& plan) const;
  bool plan_cell(int level, Cell cell, LeafPlan& plan) const;
  int term_of(int level, const Cell& cell, LeafPlan& plan) const;
  int any_term_of(int level, Cell cell, LeafPlan& plan) const;
  bool wrap_or_clamp(int level, Cell& cell) const;
  bool direct_source(int level, const Cell& cell, LeafPlan& plan) const;
  void replay(const LeafPlan& plan, const BlockKey& leaf, const BlockArray& array, int first_var, int end_var) const;
  void forget_plans();
  void restricted_values(int level, const Cell& cell, double* out, LastLeaf& last) const;
  void prolonged_values(int level, const Cell& cell, double* out, LastLeaf& last) const;
  void any_values(int level, Cell cell, double* out, LastLeaf& last) const;  // also beyond the edges
  struct Vars {  // the variables a fill writes: [first, end)
    int first, end;
  };
  void fill_block(const BlockKey& leaf, const LeafData& data, Vars vars) const;
  bool plan_is_current(const LeafPlan& plan) const;
  // Guard cells [lo, hi) of a leaf (block-local, per axis), found cell by cell.
  void fill_region(const BlockKey& leaf, const BlockArray& array, const std::array<int, 3>& lo,
                   const std::array<int, 3>& hi, Vars vars) const;

  BoundaryValue outflow_boundary();

  const BlockForest& forest_;
  std::array<int, 3> cells_, guard_;
  int n_vars_;
  BoundaryValue boundary_;
  bool outflow_ = true;  // boundary_ is the default outflow rule
  std::unordered_map<BlockKey, LeafData, BlockKeyHash> blocks_;
  mutable std::atomic<bool> any_plan_{false};  // some leaf holds a plan (set_block then forgets them)
};

}  // namespace korch
