// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestMesh: the copies of the other ranks' leaves that this rank's guard fills read (ghosts),
// planned per regrid and exchanged per fill, at once or in steps (docs/adaptive-mesh.md, "On ranks").
#include "forest_ghosts.hpp"

#include <korch/forest_mesh.hpp>

#include <algorithm>

namespace korch {

ForestMesh::~ForestMesh() { abandon_ghost_copies(); }

int ForestMesh::own_block(const BlockKey& leaf) const {
  if (!forest_.is_leaf(leaf) || own_.empty()) return -1;
  // This rank's leaves are one stretch of the Morton curve.
  const int id = forest_.leaf_index(leaf) - forest_.leaf_index(own_.front());
  return id >= 0 && id < static_cast<int>(own_.size()) ? id : -1;
}

void ForestMesh::exchange_ghost_leaves() {
  start_ghost_copies();
  while (ghost_messages_outstanding() > 0) wait_for_ghosts();
  finish_ghost_copies();
}

const std::vector<int>& ForestMesh::leaves_without_ghosts() const noexcept { return ghosts_->without_ghosts(); }

void ForestMesh::start_ghost_copies(FillBy /*fill_by: host leaves, the same fill either way*/, int first_var,
                                    int n_vars) {
  ghosts_->start([&](const BlockKey& leaf, const ForestGuardFill::Box& box, int first, int n,
                     double* out) { detail::pack_box(array_of(data_.at(leaf)), box, first, n, out); },
                 first_var, n_vars);
}

int ForestMesh::ghost_messages_outstanding() const noexcept { return ghosts_->outstanding(); }

std::size_t ForestMesh::ghost_values_sent() const noexcept { return ghosts_->values_sent(); }

std::vector<int> ForestMesh::wait_for_ghosts() {
  return ghosts_->wait([&](const BlockKey& ghost, const ForestGuardFill::Box& box, int first, int n, const double* in) {
    detail::unpack_box(array_of(data_.at(ghost)), box, first, n, in);
  });
}

void ForestMesh::finish_ghost_copies() { ghosts_->finish(); }

void ForestMesh::abandon_ghost_copies() noexcept {
  if (ghosts_) ghosts_->abandon();
}

}  // namespace korch
