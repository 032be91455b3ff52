// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal: the guard-cell fill of one rank as lists of copies, made once by a planner (from a
// korch::Grid and its decomposition, or from a data source and its neighbour lists) and run by
// GuardCellExchange on every fill. Offsets count doubles from a block's cell (var 0, 0, 0, 0) with
// the block's own strides, for variable 0; variable v adds v times the block's variable stride.
#pragma once

#include <korch/block_neighbours.hpp>
#include <korch/communicator.hpp>
#include <korch/decomposition.hpp>
#include <korch/guard_cell_boundary.hpp>

#include <array>
#include <cstddef>
#include <vector>

namespace korch {

class DataSource;
class Grid;

namespace detail {

struct CellCopy {
  int dst_block;  // source ids of this rank's blocks; -1 where unused (a message's other side)
  int src_block;
  std::ptrdiff_t dst;
  std::ptrdiff_t src;
};

struct PeerPlan {
  int rank = 0;
  std::vector<CellCopy> recv;  // dst filled from the message, in message order
  std::vector<CellCopy> send;  // src packed into the message, in message order
  std::vector<int> blocks;     // blocks that this message completes (ascending, no repeats)
  std::vector<double> recv_buffer, send_buffer;
};

struct GuardCellPlan {
  std::vector<std::vector<CellCopy>> local;  // per block: copies within the rank, boundaries included
  std::vector<PeerPlan> peers;               // ascending rank
  std::vector<std::vector<Direction>> user;  // per block: the directions the code's boundary fill fills
};

// Every guard cell of `grid` from the interior cell of the whole grid at its position wrapped or
// clamped into the domain (docs/ranks.md).
GuardCellPlan plan_grid(const Grid& grid, const Decomposition& decomposition, std::array<BoundaryKind, 3> boundary,
                        int rank, int n_ranks);

// Every guard cell of `source`'s blocks from what `neighbours` names in its direction; `width[d]`
// guard cells per side (-1: each block's own). Collective over `comm`: gathers every rank's blocks
// and lists once, and every rank checks them all, so that a mistake anywhere is the same
// korch::Error on every rank.
GuardCellPlan plan_neighbours(const DataSource& source, const NeighbourList& neighbours, const Communicator& comm,
                              std::array<int, 3> width);

}  // namespace detail
}  // namespace korch
