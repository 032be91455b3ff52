// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The asynchronous guard-cell iterator of an adaptive mesh (docs/adaptive-mesh.md, "On ranks"): a
// BlockIterator over an adaptive mesh's leaves on this rank (a ForestMesh's blocks(), or the code's
// own BlockList of a ForestBlocks) that starts the copies of the other ranks' leaves when
// the cycle's distributor begins and hands out each leaf as soon as its guard cells can be filled —
// the leaves that read no other rank's leaf first, then the others as their messages arrive — so
// that the teams compute while the messages travel.
//
// Fill::on_hand_out fills a leaf's guard cells of variables [first_var, first_var + n_vars) on the
// distributor's thread before handing it out, and before that those of every leaf of this rank
// that reads it (within two neighbours): guard cells hold the values of the cycle's start even
// where the cycle updates the filled variables in place (a code's leaves in device memory are filled
// on the device, ForestBlocks). Fill::by_the_action leaves the fill to
// the cycle's action (ForestMesh::fill_guard_cells(block, first_var, n_vars), spread over the
// team's threads; ForestBlocks has the same call): the iterator only orders the leaves, and no action of the cycle may
// write the variables the fills read (write the other state set, as korch-hydro does).
//
//   korch::ForestFillIterator leaves(mesh, 0, n_vars);
//   runtime.execute(bundle, configuration, mesh.blocks(), &leaves);
#pragma once

#include <korch/block_iterator.hpp>
#include <korch/forest_leaves.hpp>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace korch {

class ForestFillIterator : public BlockIterator {
 public:
  enum class Fill { on_hand_out, by_the_action };
  // n_vars < 0: through the last variable. The mesh must outlive the iterator's cycles.
  ForestFillIterator(ForestLeaves& mesh, int first_var, int n_vars, Fill fill = Fill::on_hand_out);

  void begin(const DataSource& source) override;
  std::optional<int> next() override;
  void abandon() noexcept override;

  // Leaves handed out while copies of other ranks' leaves were still in flight, in the last cycle.
  std::size_t leaves_before_last_message() const noexcept { return early_; }

 private:
  void plan_readers();
  void mark_complete(int block);
  bool ready(int block) const;

  ForestLeaves& mesh_;
  int first_, count_;
  Fill fill_;
  std::uint64_t planned_version_ = 0;
  bool planned_ = false;
  std::vector<std::vector<int>> readers_;  // per block: this rank's other leaves that read it
  std::vector<char> complete_, filled_, queued_;
  std::deque<int> ready_;
  std::size_t early_ = 0;
};

}  // namespace korch
