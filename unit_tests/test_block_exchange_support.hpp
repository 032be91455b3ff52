// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A physics code's own blocks for the guard-cell suites: one rank's share of a logically
// rectangular arrangement of blocks whose columns differ in size (so faces match and corners do
// not), stored by the code in three ways in turn: Kokkos LayoutLeft Views (i, j, k, var), LayoutRight
// Views (var, i, j, k) and padded raw arrays with strides of their own.
#pragma once

#include <korch/block_list.hpp>
#include <korch/block_neighbours.hpp>
#include <korch/communicator.hpp>
#include <korch/guard_cell_exchange.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

namespace korch::test {

struct Arrangement {
  int dims = 2;
  std::array<std::vector<int>, 3> sizes;  // interior cells of each column of blocks, per axis
  std::array<BoundaryKind, 3> boundary{BoundaryKind::periodic, BoundaryKind::periodic, BoundaryKind::periodic};
  int guard = 2;
  int n_vars = 3;
  bool walls_y = false;  // y's edges are reflecting walls the code fills (Neighbour::user()), not boundary[1]

  std::array<int, 3> counts() const {
    return {static_cast<int>(sizes[0].size()), static_cast<int>(sizes[1].size()), static_cast<int>(sizes[2].size())};
  }
  int n_blocks() const { return counts()[0] * counts()[1] * counts()[2]; }
  std::array<int, 3> index_of(int global) const {
    const auto c = counts();
    return {global % c[0], (global / c[0]) % c[1], global / (c[0] * c[1])};
  }
  std::array<int, 3> cells(int global) const {
    const auto q = index_of(global);
    return {sizes[0][static_cast<std::size_t>(q[0])], sizes[1][static_cast<std::size_t>(q[1])],
            sizes[2][static_cast<std::size_t>(q[2])]};
  }
  // The global position of the block's first interior cell.
  std::array<int, 3> origin(int global) const {
    const auto q = index_of(global);
    std::array<int, 3> o{};
    for (std::size_t d = 0; d < 3; ++d) o[d] = std::accumulate(sizes[d].begin(), sizes[d].begin() + q[d], 0);
    return o;
  }
  int total(std::size_t d) const { return std::accumulate(sizes[d].begin(), sizes[d].end(), 0); }
  // Contiguous runs of global ids per rank.
  int owner(int global, int n_ranks) const { return static_cast<int>(std::int64_t{global} * n_ranks / n_blocks()); }
  std::array<int, 3> guard_cells() const { return {guard, dims >= 2 ? guard : 0, dims >= 3 ? guard : 0}; }
};

// A distinct value per global cell and variable.
inline double value_at(const std::array<int, 3>& cell, int var) {
  return 1.0 + cell[0] + 1000.0 * cell[1] + 1.0e6 * cell[2] + 0.25 * var;
}

class CodeBlocks {
 public:
  // device: the code keeps its arrays in device memory (BlockArray::on_device); the checks below
  // read them through the list's host copies.
  CodeBlocks(const Arrangement& a, const Communicator& comm, bool device = false)
      : a_(a), device_(device), list_("code blocks", a.n_vars) {
    for (int global = 0; global < a.n_blocks(); ++global)
      if (a.owner(global, comm.size()) == comm.rank()) add(global);
  }
  BlockList& list() { return list_; }
  const BlockList& list() const { return list_; }
  NeighbourList neighbours(const Communicator& comm) const {
    const int n_ranks = comm.size();
    auto lists = NeighbourList::uniform(list_, a_.dims, a_.counts(), a_.boundary,
                                        [&](int global) { return a_.owner(global, n_ranks); });
    if (a_.walls_y)
      for (int b = 0; b < list_.n_blocks(); ++b)
        for (const auto& d : NeighbourList::directions(a_.dims))
          if (lists.get(b, d).kind == Neighbour::Kind::outflow) lists.set(b, d, Neighbour::user());
    return lists;
  }

  // The code's reflecting wall in y: a guard cell beyond the wall takes minus its mirror image (in a
  // corner, the mirror is a guard cell the exchange copied first).
  void reflect(int b, const Direction& d, int first, int count) const {
    const auto& m = list_.block(b);
    const BlockView u = list_.block_view(b);
    const auto range = [&](std::size_t a, int c, int& lo, int& hi) {
      lo = c < 0 ? 0 : c == 0 ? m.interior.lo[a] : m.interior.hi[a];
      hi = c < 0 ? m.interior.lo[a] : c == 0 ? m.interior.hi[a] : m.stored.hi[a];
    };
    int i0, i1, j0, j1, k0, k1;
    range(0, d[0], i0, i1);
    range(1, d[1], j0, j1);
    range(2, d[2], k0, k1);
    const int edge = d[1] < 0 ? m.interior.lo[1] : m.interior.hi[1];  // the wall between cells edge - 1 and edge
    for (int v = first; v < first + count; ++v)
      for (int i = i0; i < i1; ++i)
        for (int j = j0; j < j1; ++j)
          for (int k = k0; k < k1; ++k) u(v, i, j, k) = -u(v, i, 2 * edge - 1 - j, k);
  }

  // Interior cells value_at(global cell), guard cells NaN.
  void paint() {
    for (int b = 0; b < list_.n_blocks(); ++b)
      each_cell(b, [&](const BlockView& u, int v, int i, int j, int k, bool interior, const std::array<int, 3>& cell) {
        u(v, i, j, k) = interior ? value_at(cell, v) : std::numeric_limits<double>::quiet_NaN();
      });
  }

  // reflect() as the exchange's boundary fill.
  GuardCellExchange::BoundaryFill wall_fill() const {
    return [this](int b, const Direction& d, int first, int count) { reflect(b, d, first, count); };
  }

  // Every interior cell of block `b` set to `value`, as an update in place would.
  void overwrite_interior(int b, double value) {
    each_cell(b, [&](const BlockView& u, int v, int i, int j, int k, bool interior, const std::array<int, 3>&) {
      if (interior) u(v, i, j, k) = value;
    });
  }

  // Guard cells of block `only` (all: -1) that do not hold what a fill of variables [first, first +
  // count) with `width` guard cells per side must leave: the wrapped (periodic) or clamped
  // (outflow) global cell within the width, NaN beyond it and in the other variables.
  int wrong_guard_cells(int first, int count, std::array<int, 3> width, int only = -1) const {
    int wrong = 0;
    for (int b = 0; b < list_.n_blocks(); ++b) {
      if (only >= 0 && b != only) continue;
      const auto& m = list_.block(b);
      each_cell(b, [&](const BlockView& u, int v, int i, int j, int k, bool interior, std::array<int, 3> cell) {
        if (interior) return;
        const int l[3] = {i, j, k};
        bool reached = true;
        double sign = 1;
        if (a_.walls_y && (cell[1] < 0 || cell[1] >= a_.total(1))) {
          sign = -1;
          cell[1] = cell[1] < 0 ? -1 - cell[1] : 2 * a_.total(1) - 1 - cell[1];
        }
        for (std::size_t d = 0; d < 3; ++d) {
          const int x = l[d] - m.interior.lo[d];
          reached = reached && x >= -width[d] && x < m.interior.hi[d] - m.interior.lo[d] + width[d];
          const int n = a_.total(d);
          cell[d] = a_.boundary[d] == BoundaryKind::periodic ? ((cell[d] % n) + n) % n : std::clamp(cell[d], 0, n - 1);
        }
        const double got = u(v, i, j, k);
        const bool filled = reached && v >= first && v < first + count;
        if (filled ? got != sign * value_at(cell, v) : !std::isnan(got)) ++wrong;
      });
    }
    return wrong;
  }

 private:
  using Left = Kokkos::View<double****, Kokkos::LayoutLeft, DeviceMemSpace>;
  using Right = Kokkos::View<double****, Kokkos::LayoutRight, DeviceMemSpace>;
  using Raw = Kokkos::View<double*, DeviceMemSpace>;
  using HostLeft = Kokkos::View<double****, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  using HostRight = Kokkos::View<double****, Kokkos::LayoutRight, Kokkos::HostSpace>;

  void add(int global) {
    const auto n = a_.cells(global);
    const auto g = a_.guard_cells();
    const int e[3] = {n[0] + 2 * g[0], n[1] + 2 * g[1], n[2] + 2 * g[2]};
    BlockShape s;
    s.cells = n;
    s.guard = g;
    s.index = a_.index_of(global);
    s.global_id = global;
    BlockArray array;
    switch (global % 3) {
      case 0:
        if (device_) {
          left_.emplace_back("code block (i, j, k, var)", e[0], e[1], e[2], a_.n_vars);
          array = BlockArray::on_device(left_.back(), IndexOrder::i_j_k_var);
        } else {
          host_left_.emplace_back("code block (i, j, k, var)", e[0], e[1], e[2], a_.n_vars);
          array = BlockArray::of(host_left_.back(), IndexOrder::i_j_k_var);
        }
        break;
      case 1:
        if (device_) {
          right_.emplace_back("code block (var, i, j, k)", a_.n_vars, e[0], e[1], e[2]);
          array = BlockArray::on_device(right_.back(), IndexOrder::var_i_j_k);
        } else {
          host_right_.emplace_back("code block (var, i, j, k)", a_.n_vars, e[0], e[1], e[2]);
          array = BlockArray::of(host_right_.back(), IndexOrder::var_i_j_k);
        }
        break;
      default: {
        // k fastest, then i, then j, each row and plane padded, variables apart.
        const std::ptrdiff_t sk = 1, si = e[2] + 3, sj = si * e[0] + 5, sv = sj * e[1] + 7;
        const std::array<std::ptrdiff_t, 4> extents{a_.n_vars, e[0], e[1], e[2]}, strides{sv, si, sj, sk};
        if (device_) {
          raw_device_.emplace_back("code block (raw)", static_cast<std::size_t>(sv * a_.n_vars));
          array = BlockArray::on_device(raw_device_.back().data(), IndexOrder::var_i_j_k, extents, strides);
        } else {
          raw_.emplace_back(static_cast<std::size_t>(sv * a_.n_vars), -7.0);
          array = BlockArray::of(raw_.back().data(), IndexOrder::var_i_j_k, extents, strides);
        }
      }
    }
    list_.add(s, array);
  }

  template <class Visit>
  void each_cell(int b, Visit&& visit) const {
    const auto& m = list_.block(b);
    const BlockView u = list_.block_view(b);
    const auto o = a_.origin(m.global_id);
    for (int v = 0; v < a_.n_vars; ++v)
      for (int i = m.stored.lo[0]; i < m.stored.hi[0]; ++i)
        for (int j = m.stored.lo[1]; j < m.stored.hi[1]; ++j)
          for (int k = m.stored.lo[2]; k < m.stored.hi[2]; ++k) {
            const int l[3] = {i, j, k};
            bool interior = true;
            std::array<int, 3> cell{};
            for (std::size_t d = 0; d < 3; ++d) {
              interior = interior && l[d] >= m.interior.lo[d] && l[d] < m.interior.hi[d];
              cell[d] = o[d] + l[d] - m.interior.lo[d];
            }
            visit(u, v, i, j, k, interior, cell);
          }
  }

  Arrangement a_;
  bool device_;
  BlockList list_;
  std::vector<HostLeft> host_left_;
  std::vector<HostRight> host_right_;
  std::vector<std::vector<double>> raw_;
  std::vector<Left> left_;
  std::vector<Right> right_;
  std::vector<Raw> raw_device_;
};

}  // namespace korch::test
