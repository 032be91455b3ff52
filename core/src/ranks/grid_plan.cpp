// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The guard-cell plan of a korch::Grid over its decomposition (guard_cell_plan.hpp).
#include "guard_cell_plan.hpp"

#include <korch/error.hpp>
#include <korch/grid.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace korch::detail {
namespace {

void check_grid(const Grid& grid, const Decomposition& dec, int me, int n_ranks) {
  const GridSpec& spec = grid.spec();
  if (dec.blocks() != spec.blocks)
    throw Error::format(
        "guard-cell exchange: the decomposition has {}x{}x{} blocks, the grid {}x{}x{}: build both from "
        "the same sizes",
        dec.blocks()[0], dec.blocks()[1], dec.blocks()[2], spec.blocks[0], spec.blocks[1], spec.blocks[2]);
  if (dec.n_ranks() != n_ranks)
    throw Error::format("guard-cell exchange: the decomposition is for {} ranks, the communicator has {}",
                        dec.n_ranks(), n_ranks);
  const auto& mine = dec.blocks_of(me);
  bool same = static_cast<int>(mine.size()) == grid.n_blocks();
  for (int b = 0; same && b < grid.n_blocks(); ++b) same = grid.block(b).global_id == mine[static_cast<std::size_t>(b)];
  if (!same)
    throw Error::format(
        "guard-cell exchange: rank {}'s grid holds {} blocks, not the {} the decomposition gives it: set "
        "GridSpec::owned_blocks to Decomposition::blocks_of(rank)",
        me, grid.n_blocks(), mine.size());
  const auto gw = grid.guard_width();
  for (std::size_t d = 0; d < 3; ++d)
    if (gw[d] > spec.block_cells[d])
      throw Error::format(
          "guard-cell exchange: blocks have {} cells in {} but {} guard cells: blocks need at least as "
          "many interior cells as guard cells",
          spec.block_cells[d], "xyz"[d], gw[d]);
}

// Every guard cell of the block at `index`, in (i, j, k) order, with its source: the interior
// cell of the whole grid at its own global position wrapped or clamped into the domain.
// `visit(cell, source block's global id, source cell)`.
template <class Visit>
void each_guard_cell(const Grid& grid, const Decomposition& dec, const std::array<BoundaryKind, 3>& boundary,
                     const std::array<int, 3>& index, Visit&& visit) {
  const GridSpec& spec = grid.spec();
  const auto gw = grid.guard_width();
  const auto ext = grid.stored_extent();
  const auto nb = spec.block_cells;
  for (int i = 0; i < ext[0]; ++i)
    for (int j = 0; j < ext[1]; ++j)
      for (int k = 0; k < ext[2]; ++k) {
        const int l[3] = {i, j, k};
        bool interior = true;
        std::array<int, 3> src_block{}, src{};
        for (int d = 0; d < 3; ++d) {
          const auto D = static_cast<std::size_t>(d);
          if (gw[D] == 0) {
            src_block[D] = index[D];
            src[D] = l[d];
            continue;
          }
          interior = interior && l[d] >= gw[D] && l[d] < gw[D] + nb[D];
          const int n = nb[D] * spec.blocks[D];
          int g = index[D] * nb[D] + l[d] - gw[D];
          if (boundary[D] == BoundaryKind::periodic)
            g = ((g % n) + n) % n;
          else
            g = std::clamp(g, 0, n - 1);
          src_block[D] = g / nb[D];
          src[D] = g % nb[D] + gw[D];
        }
        if (interior) continue;
        const int cell = (i * ext[1] + j) * ext[2] + k;
        visit(cell, dec.global_id(src_block), (src[0] * ext[1] + src[1]) * ext[2] + src[2]);
      }
}

PeerPlan& peer(std::map<int, PeerPlan>& peers, int rank) {
  auto& p = peers[rank];
  p.rank = rank;
  return p;
}

// The global ids of the blocks next to one of this rank's (its own included), ascending: only
// they can need this rank's cells.
std::set<int> blocks_near(const Grid& grid, const Decomposition& dec, const std::array<BoundaryKind, 3>& boundary) {
  const GridSpec& spec = grid.spec();
  const auto gw = grid.guard_width();
  std::set<int> near;
  for (const auto& m : grid.blocks())
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz) {
          std::array<int, 3> q{m.index[0] + dx, m.index[1] + dy, m.index[2] + dz};
          bool inside = true;
          for (std::size_t D = 0; D < 3; ++D) {
            if (q[D] >= 0 && q[D] < spec.blocks[D]) continue;
            if (boundary[D] == BoundaryKind::periodic && gw[D] > 0)
              q[D] = (q[D] + spec.blocks[D]) % spec.blocks[D];
            else
              inside = false;
          }
          if (inside) near.insert(dec.global_id(q));
        }
  return near;
}

}  // namespace

GuardCellPlan plan_grid(const Grid& grid, const Decomposition& dec, std::array<BoundaryKind, 3> boundary, int me,
                        int n_ranks) {
  check_grid(grid, dec, me, n_ranks);
  std::unordered_map<int, int> local_of;
  for (const auto& m : grid.blocks()) local_of[m.global_id] = m.id;

  // Each guard cell of ours is a copy within this rank or a cell received from its source's owner.
  GuardCellPlan plan;
  std::map<int, PeerPlan> peers;
  plan.local.assign(static_cast<std::size_t>(grid.n_blocks()), {});
  for (const auto& m : grid.blocks()) {
    each_guard_cell(grid, dec, boundary, m.index, [&](int cell, int src_global, int src_cell) {
      const int owner = dec.owner(src_global);
      if (owner == me) {
        plan.local[static_cast<std::size_t>(m.id)].push_back({m.id, local_of.at(src_global), cell, src_cell});
        return;
      }
      PeerPlan& p = peer(peers, owner);
      p.recv.push_back({m.id, -1, cell, -1});
      if (p.blocks.empty() || p.blocks.back() != m.id) p.blocks.push_back(m.id);
    });
  }
  // What the other ranks need from this one, in the order they list it: their blocks ascending,
  // each block's guard cells in (i, j, k) order.
  for (const int g : blocks_near(grid, dec, boundary)) {
    const int owner = dec.owner(g);
    if (owner == me) continue;
    PeerPlan* p = nullptr;
    each_guard_cell(grid, dec, boundary, dec.index_of(g), [&](int, int src_global, int src_cell) {
      if (dec.owner(src_global) != me) return;
      if (!p) p = &peer(peers, owner);
      p->send.push_back({-1, local_of.at(src_global), -1, src_cell});
    });
  }
  // The blocks near are ascending and each rank's blocks are ascending ids, so the sends to a rank
  // follow that rank's own order of its blocks, as its receive list does.
  for (auto& [rank, p] : peers) plan.peers.push_back(std::move(p));
  return plan;
}

}  // namespace korch::detail
