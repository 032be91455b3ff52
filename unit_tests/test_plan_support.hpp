// Shared by the planner suites: a small 2-D grid, its periodic guard-cell fill, and action bodies
// computed from declarations (every written variable becomes a bounded function of everything the
// action reads, stencil neighbours included), so that any wrong order of actions changes results.
#pragma once

#include <korch/grid.hpp>
#include <korch/plan/executor.hpp>
#include <korch/plan/operation.hpp>

#include <cmath>
#include <vector>

namespace korch::test {

inline GridSpec plan_grid_spec(int n_vars) {
  GridSpec s;
  s.block_cells = {8, 8, 1};
  s.blocks = {4, 2, 1};
  s.guard = 2;
  s.guard_dims = 2;
  s.n_vars = n_vars;
  s.tile_cells = {4, 4, 1};
  return s;
}

// Every guard cell of `variables` takes the value of its periodic source cell.
inline void fill_periodic(Grid& grid, const std::vector<int>& variables) {
  const GridSpec& s = grid.spec();
  auto d = grid.data();
  for (int b = 0; b < grid.n_blocks(); ++b) {
    const BlockMeta& m = grid.block(b);
    for (int v : variables)
      for (int i = m.stored.lo[0]; i < m.stored.hi[0]; ++i)
        for (int j = m.stored.lo[1]; j < m.stored.hi[1]; ++j) {
          const bool interior = i >= m.interior.lo[0] && i < m.interior.hi[0] && j >= m.interior.lo[1] && j < m.interior.hi[1];
          if (interior) continue;
          std::array<int, 2> src_block{}, src_cell{};
          const std::array<int, 2> cell{i, j};
          for (int dim = 0; dim < 2; ++dim) {
            const int n = s.block_cells[static_cast<std::size_t>(dim)];
            const int total = n * s.blocks[static_cast<std::size_t>(dim)];
            const int global = ((m.index[static_cast<std::size_t>(dim)] * n + cell[static_cast<std::size_t>(dim)] - s.guard) % total + total) % total;
            src_block[static_cast<std::size_t>(dim)] = global / n;
            src_cell[static_cast<std::size_t>(dim)] = global % n + s.guard;
          }
          const int sb = src_block[0] + s.blocks[0] * src_block[1];
          d(b, v, i, j, 0) = d(sb, v, src_cell[0], src_cell[1], 0);
        }
  }
}

inline void paint(Grid& grid) {
  grid.fill([](int b, int v, int i, int j, int k) { return 0.01 * (b + 1) + 0.1 * v + 0.003 * i + 0.007 * j + 0.0 * k; });
}

// The body of a declared action: each written variable becomes a bounded function of the values
// read (each read variable at the cell and, for a stencil g, its 4g neighbours in x and y).
inline plan::ActionBody body_of(const ActionDeclaration& a, const plan::Operation& operation, int salt) {
  std::vector<std::pair<int, int>> reads;
  for (const auto& r : a.reads) reads.emplace_back(operation.variable_index(r.variable), r.stencil);
  std::vector<int> writes;
  for (const auto& w : a.writes) writes.push_back(operation.variable_index(w));
  // Runs on team threads: the block's unmanaged view, not a copy of the grid's managed View, whose
  // reference count a Serial-only Kokkos changes without atomics (grid.hpp, Grid::data).
  return [reads, writes, salt](Grid& grid, int b, const Box& box) {
    const auto d = grid.block_data(b);
    for (int i = box.lo[0]; i < box.hi[0]; ++i)
      for (int j = box.lo[1]; j < box.hi[1]; ++j)
        for (int k = box.lo[2]; k < box.hi[2]; ++k) {
          double acc = 0.001 * salt;
          for (const auto& [v, g] : reads) {
            acc += 0.7 * d(v, i, j, k) + 0.013 * v;
            for (int s = 1; s <= g; ++s)
              acc += 0.05 * (d(v, i - s, j, k) + d(v, i + s, j, k) + 0.5 * d(v, i, j - s, k) + 0.25 * d(v, i, j + s, k));
          }
          for (std::size_t w = 0; w < writes.size(); ++w)
            d(writes[w], i, j, k) = acc / (1.0 + std::fabs(acc)) + 0.01 * static_cast<double>(w + 1);
        }
  };
}

inline plan::ActionBodies bodies_of(const plan::Operation& operation) {
  plan::ActionBodies out;
  int salt = 1;
  for (const ActionDeclaration* a : operation.actions()) out[a->action] = body_of(*a, operation, salt++);
  return out;
}

// Interior cells that differ (bitwise) between two grids of the same spec.
inline int differing_cells(const Grid& x, const Grid& y) {
  int n = 0;
  auto a = x.data();
  auto b = y.data();
  for (int blk = 0; blk < x.n_blocks(); ++blk) {
    const Box& in = x.block(blk).interior;
    for (int v = 0; v < x.n_vars(); ++v)
      for (int i = in.lo[0]; i < in.hi[0]; ++i)
        for (int j = in.lo[1]; j < in.hi[1]; ++j)
          for (int k = in.lo[2]; k < in.hi[2]; ++k) n += a(blk, v, i, j, k) != b(blk, v, i, j, k) ? 1 : 0;
  }
  return n;
}

}  // namespace korch::test
