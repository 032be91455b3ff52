// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestLeaves: what the asynchronous guard-cell iterator of an adaptive mesh (ForestFillIterator)
// needs of it, whoever stores the leaves: korch (ForestMesh) or the physics code (ForestBlocks).
// Every rank holds the whole forest and this rank's leaves as a data source, block id b being
// own_leaves()[b]; a leaf's guard fill reads the leaves within two neighbours of it, some of them
// copies of other ranks' leaves that travel while a cycle runs (docs/adaptive-mesh.md, "On ranks").
#pragma once

#include <korch/block_forest.hpp>
#include <korch/data_source.hpp>

#include <cstdint>
#include <vector>

namespace korch {

class ForestLeaves {
 public:
  virtual ~ForestLeaves() = default;

  virtual const BlockForest& forest() const noexcept = 0;
  // This rank's leaves, block id order.
  virtual const std::vector<BlockKey>& own_leaves() const noexcept = 0;
  // The data source whose blocks are own_leaves(): what Runtime::execute runs on.
  virtual const DataSource& leaf_source() const noexcept = 0;
  // The block id of one of this rank's leaves; -1 for another rank's leaf or a key not a leaf.
  virtual int own_block(const BlockKey& leaf) const = 0;
  // Changes whenever the leaves, their owners or their arrays change (a regrid, a new list).
  virtual std::uint64_t leaves_version() const noexcept = 0;
  virtual int n_vars() const noexcept = 0;

  // Who fills the guard cells in the cycle that starts: the iterator, on its own thread before it
  // hands a leaf out (ForestFillIterator::Fill::on_hand_out), or the cycle's action, on the team's
  // threads. ForestBlocks fills a code's device leaves on the device in the first case.
  enum class FillBy { iterator, action };
  // The copies of other ranks' leaves in steps (ForestMesh documents the order of these calls), of
  // variables first_var .. first_var + n_vars - 1 (n_vars < 0: through the last), the same on every
  // rank: until the next start, a fill of a leaf that reads other ranks' leaves may read only
  // those variables (fill_guard_cells throws korch::Error naming the range otherwise).
  virtual void start_ghost_copies(FillBy fill_by = FillBy::action, int first_var = 0, int n_vars = -1) = 0;
  virtual const std::vector<int>& leaves_without_ghosts() const noexcept = 0;
  virtual std::vector<int> wait_for_ghosts() = 0;
  virtual int ghost_messages_outstanding() const noexcept = 0;
  // Doubles this rank sends to the others per fill of the last start_ghost_copies()'s variables
  // (every variable before the first): of each leaf another rank reads, the boxes of its cells that
  // rank's fills read (whole leaves with a custom boundary).
  virtual std::size_t ghost_values_sent() const noexcept = 0;
  virtual void finish_ghost_copies() = 0;
  virtual void abandon_ghost_copies() noexcept = 0;
  // One leaf's guard cells of variables first_var .. first_var + n_vars - 1 (n_vars < 0: through
  // the last); fills of distinct blocks may run at the same time.
  virtual void fill_guard_cells(int block, int first_var, int n_vars) const = 0;
};

}  // namespace korch
