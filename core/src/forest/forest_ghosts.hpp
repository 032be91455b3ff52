// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal: the copies of other ranks' leaves that this rank's guard fills read (ghosts), for any
// adaptive mesh whose every rank holds the whole forest and knows each leaf's owner (ForestMesh,
// ForestBlocks; docs/adaptive-mesh.md, "On ranks"). Planned once per list of leaves, exchanged per
// fill, at once or in steps. A leaf travels as the boxes of it that the receiving rank's fills read
// (limit(): its groups' sums, then its cells), or whole, each variable's box in korch::Grid's layout,
// which the mesh packs and unpacks; both sides order a message's leaves along the curve.
#pragma once

#include <korch/block_forest.hpp>
#include <korch/communicator.hpp>
#include <korch/forest_guard_fill.hpp>

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace korch::detail {

class PeerMessages;

// A box of variables first_var .. first_var + n_vars - 1 of a leaf's host array into a message, in
// the order ForestGhosts::Pack names, and back; a box of groups (Box::group) as one sum per group,
// unpacked into the group's first cell, the others -0.0: only the fills' means may read it then
// (ForestDeviceFill does the same on the device).
void pack_box(const BlockArray& array, const ForestGuardFill::Box& box, int first_var, int n_vars, double* out);
void unpack_box(const BlockArray& array, const ForestGuardFill::Box& box, int first_var, int n_vars, const double* in);

class ForestGhosts {
 public:
  // `who` names the mesh in errors ("ForestMesh 'density'").
  ForestGhosts(const Communicator& comm, std::string who);
  ~ForestGhosts();
  ForestGhosts(const ForestGhosts&) = delete;
  ForestGhosts& operator=(const ForestGhosts&) = delete;

  using Box = ForestGuardFill::Box;
  // Works out who sends what from the replicated forest: `owners` per leaf index, `own` this
  // rank's leaves in block id order, each leaf `stored` cells per axis (guard cells included) of
  // `n_vars` variables, whole until limit(). Throws korch::Error while copies are in flight.
  void plan(const BlockForest& forest, const std::vector<int>& owners, const std::vector<BlockKey>& own,
            std::array<int, 3> stored, int n_vars);
  // Each copy this rank receives limited to the boxes that the fills of `own` (its leaves) read
  // (ForestGuardFill::cells_read; whole leaves where it cannot say), told to the ranks that send
  // them: collective over the ranks that exchange leaves. Groups read only through means travel as
  // one sum per coarse cell (Box::group; pack_box and unpack_box, and their device kernels). Nothing
  // on one process, where the fills then make their plans as they go.
  void limit(const ForestGuardFill& fill, const std::vector<BlockKey>& own);
  // Doubles that the copies this rank sends carry per exchange of the last start()'s variables.
  std::size_t values_sent() const noexcept;
  // Per rank: the leaves this rank receives from it (ghosts), in the order they arrive.
  const std::vector<std::vector<BlockKey>>& receives() const noexcept { return receives_; }
  // Blocks (ids ascending) whose fill reads no other rank's leaf.
  const std::vector<int>& without_ghosts() const noexcept { return without_; }

  // The box's cells (or groups' sums) of variables first_var .. first_var + n_vars - 1, variable by
  // variable, each in korch::Grid's order (k fastest). A leaf's boxes are packed, and unpacked, in
  // turn: its sums, then its cells.
  using Pack = std::function<void(const BlockKey& leaf, const Box& box, int first_var, int n_vars, double* out)>;
  using Unpack =
      std::function<void(const BlockKey& ghost, const Box& box, int first_var, int n_vars, const double* in)>;
  // Posts the receives and sends this rank's leaves that other ranks read, packed by `pack`: of
  // variables first_var .. first_var + n_vars - 1 (n_vars < 0: through the last), the same on every
  // rank. Throws korch::Error for a range outside the leaves' variables.
  void start(const Pack& pack, int first_var = 0, int n_vars = -1);
  // The count of variables first_var .. first_var + n_vars - 1 (n_vars < 0: through the last);
  // throws korch::Error for a range outside the leaves' variables.
  int vars_counted(int first_var, int n_vars) const;
  // Throws korch::Error when own leaf `block` reads other ranks' leaves and the copies in place (the
  // last start()'s; every variable before the first) lack one of variables [first_var, end_var).
  void check_carried(int block, int first_var, int end_var) const;
  // Waits until a message arrived, unpacks its leaves and returns the blocks it completed.
  std::vector<int> wait(const Unpack& unpack);
  int outstanding() const noexcept;
  void finish();
  void abandon() noexcept;
  bool in_flight() const noexcept { return in_flight_; }

 private:
  Communicator comm_;
  std::string who_;
  void size_buffers();

  using LeafBoxes = std::array<Box, 2>;  // ForestGuardFill::Read's sums, then cells
  LeafBoxes whole_;
  int n_vars_ = 1;
  int first_carried_ = 0, n_carried_ = 1;                           // the variables of the last start()
  std::vector<std::vector<BlockKey>> sends_, receives_;             // per rank
  std::vector<std::vector<LeafBoxes>> send_boxes_, receive_boxes_;  // per rank, per leaf of the message
  std::vector<std::size_t> send_values_, receive_values_;           // per rank: per variable
  std::vector<std::vector<double>> send_buffers_, receive_buffers_;
  std::vector<std::vector<int>> waiters_;  // per rank: this rank's blocks that read its leaves
  std::vector<int> ranks_read_;            // per block: how many other ranks own leaves it reads
  std::vector<int> pending_;               // per block: those not yet received in this fill
  std::vector<int> without_;
  std::unique_ptr<PeerMessages> messages_;
  bool in_flight_ = false;
};

}  // namespace korch::detail
