// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "forest_conduction.hpp"

#include <korch/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace korch::hydro {

namespace {

using CellIndex = std::array<std::int64_t, 3>;

// A leaf's cell size per axis (1 beyond dims, where no face couples).
std::array<double, 3> leaf_cell_size(const std::array<double, 3>& root, int dims, int level) {
  std::array<double, 3> h{1.0, 1.0, 1.0};
  for (int a = 0; a < dims; ++a) h[static_cast<std::size_t>(a)] = std::ldexp(root[static_cast<std::size_t>(a)], -level);
  return h;
}

double cell_volume_of(const std::array<double, 3>& h) { return h[0] * h[1] * h[2]; }

// The rows of the forest's cells and the faces of one leaf that lie on its block's edges.
class ForestRows {
 public:
  ForestRows(const BlockForest& forest, const std::array<int, 3>& cells, const std::array<double, 3>& root)
      : forest_(forest), cells_(cells), root_(root), per_leaf_(cells[0] * cells[1] * cells[2]) {
    finest_ = 0;
    for (const BlockKey& leaf : forest.leaves()) finest_ = std::max(finest_, leaf.level);
    reference_volume_ = cell_volume_of(leaf_cell_size(root, forest.shape().dims, finest_));
  }

  void add_leaf(int leaf_index, ConductionSystem& system) const;

 private:
  int row(int leaf_index, const CellIndex& at) const {
    return leaf_index * per_leaf_ + static_cast<int>(at[0] + cells_[0] * (at[1] + cells_[1] * at[2]));
  }
  // The cell's global index along `axis` at its level's lattice, wrapped on periodic axes.
  std::int64_t wrapped(std::int64_t g, int axis, int level) const {
    const std::int64_t extent =
        (static_cast<std::int64_t>(forest_.shape().roots[static_cast<std::size_t>(axis)]) << level) *
        cells_[static_cast<std::size_t>(axis)];
    return ((g % extent) + extent) % extent;
  }
  // Couples the cell `at` of `leaf` (sizes h) across its face (axis, side) into the neighbouring leaves.
  void couple_across(const BlockKey& leaf, const CellIndex& at, const std::array<double, 3>& h, int axis, int side,
                     const std::vector<ForestNeighbour>& across, ConductionSystem& system) const;
  double coupling(const std::array<double, 3>& fine, const std::array<double, 3>& other, int axis) const {
    double area = 1.0;
    for (int b = 0; b < 3; ++b)
      if (b != axis) area *= std::min(fine[static_cast<std::size_t>(b)], other[static_cast<std::size_t>(b)]);
    const auto a = static_cast<std::size_t>(axis);
    return area / (0.5 * (fine[a] + other[a])) / reference_volume_;
  }

  const BlockForest& forest_;
  std::array<int, 3> cells_;
  std::array<double, 3> root_;
  int per_leaf_;
  int finest_ = 0;
  double reference_volume_ = 1;
};

void ForestRows::couple_across(const BlockKey& leaf, const CellIndex& at, const std::array<double, 3>& h, int axis,
                               int side, const std::vector<ForestNeighbour>& across, ConductionSystem& system) const {
  const int dims = forest_.shape().dims;
  const auto a = static_cast<std::size_t>(axis);
  CellIndex global{};  // the cell's index on its level's lattice
  for (std::size_t b = 0; b < 3; ++b) global[b] = leaf.position[b] * cells_[b] + at[b];
  for (const ForestNeighbour& n : across) {
    if (n.kind == ForestNeighbour::Kind::boundary) return;  // zero flux through the domain's edge
    const auto other_h = leaf_cell_size(root_, dims, n.key.level);
    CellIndex other = global;
    if (n.kind == ForestNeighbour::Kind::same) {
      other[a] = wrapped(global[a] + side, axis, leaf.level);
    } else if (n.kind == ForestNeighbour::Kind::coarser) {
      other[a] = wrapped(global[a] + side, axis, leaf.level);
      for (std::size_t b = 0; b < 3; ++b)
        if (static_cast<int>(b) < dims) other[b] /= 2;
    } else {  // finer: the fine cells of this leaf across the face that lie in n.key
      std::vector<CellIndex> fine{CellIndex{}};
      for (std::size_t b = 0; b < 3; ++b) {
        if (static_cast<int>(b) >= dims) continue;
        if (b == a) {
          for (CellIndex& f : fine)
            f[b] = wrapped(side > 0 ? 2 * (global[b] + 1) : 2 * global[b] - 1, axis, leaf.level + 1);
          continue;
        }
        std::vector<CellIndex> both;
        for (CellIndex f : fine)
          for (int o : {0, 1}) {
            f[b] = 2 * global[b] + o;
            both.push_back(f);
          }
        fine.swap(both);
      }
      const int index = forest_.leaf_index(n.key);
      for (const CellIndex& f : fine) {
        CellIndex local{};
        bool inside = true;
        for (std::size_t b = 0; b < 3; ++b) {
          local[b] = f[b] - n.key.position[b] * cells_[b];
          inside = inside && local[b] >= 0 && local[b] < cells_[b];
        }
        if (inside) system.couple(row(index, local), coupling(other_h, h, axis));
      }
      continue;
    }
    CellIndex local{};
    for (std::size_t b = 0; b < 3; ++b) local[b] = other[b] - n.key.position[b] * cells_[b];
    system.couple(row(forest_.leaf_index(n.key), local), coupling(h, other_h, axis));
  }
}

void ForestRows::add_leaf(int leaf_index, ConductionSystem& system) const {
  const BlockKey& leaf = forest_.leaves()[static_cast<std::size_t>(leaf_index)];
  const int dims = forest_.shape().dims;
  const auto h = leaf_cell_size(root_, dims, leaf.level);
  std::array<std::array<std::vector<ForestNeighbour>, 2>, 3> faces;
  for (int axis = 0; axis < dims; ++axis)
    for (int s = 0; s < 2; ++s) {
      Direction direction{};
      direction[static_cast<std::size_t>(axis)] = s == 0 ? -1 : 1;
      faces[static_cast<std::size_t>(axis)][static_cast<std::size_t>(s)] = forest_.neighbours(leaf, direction);
    }
  CellIndex at{};
  for (at[2] = 0; at[2] < cells_[2]; ++at[2])
    for (at[1] = 0; at[1] < cells_[1]; ++at[1])
      for (at[0] = 0; at[0] < cells_[0]; ++at[0]) {
        for (int axis = 0; axis < dims; ++axis) {
          const auto a = static_cast<std::size_t>(axis);
          for (int s = 0; s < 2; ++s) {
            const int side = s == 0 ? -1 : 1;
            CellIndex next = at;
            next[a] += side;
            if (next[a] >= 0 && next[a] < cells_[a])
              system.couple(row(leaf_index, next), coupling(h, h, axis));
            else
              couple_across(leaf, at, h, axis, side, faces[a][static_cast<std::size_t>(s)], system);
          }
        }
        system.end_row(cell_volume_of(h) / reference_volume_);
      }
}

}  // namespace

ConductionSystem forest_conduction_system(const BlockForest& forest, const std::array<int, 3>& cells,
                                          const std::array<double, 3>& root_cell_size) {
  const int dims = forest.shape().dims;
  for (int a = 0; a < 3; ++a) {
    const auto i = static_cast<std::size_t>(a);
    if (cells[i] < 1 || (a >= dims && cells[i] != 1))
      throw Error::format(
          "forest_conduction_system: a block of {} x {} x {} cells in a {}-D forest: give at least 1 cell per "
          "axis, and 1 beyond the forest's dimensions",
          cells[0], cells[1], cells[2], dims);
    if (a < dims && !(root_cell_size[i] > 0 && std::isfinite(root_cell_size[i])))
      throw Error::format("forest_conduction_system: the root cell size along axis {} is {}: give a positive size", a,
                          root_cell_size[i]);
  }
  const double rows = static_cast<double>(forest.n_leaves()) * cells[0] * cells[1] * cells[2];
  if (rows >= 2147483647.0)
    throw Error::format("forest_conduction_system: {} cells exceed the int ordinals of the matrix", rows);
  ConductionSystem system;
  const ForestRows builder(forest, cells, root_cell_size);
  for (int leaf = 0; leaf < forest.n_leaves(); ++leaf) builder.add_leaf(leaf, system);
  return system;
}

}  // namespace korch::hydro
