// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "forest_ranks.hpp"

#include <korch/error.hpp>
#include <korch/forest_fill_iterator.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace korch {

ForestFillIterator::ForestFillIterator(ForestLeaves& mesh, int first_var, int n_vars, Fill fill)
    : mesh_(mesh), first_(first_var), count_(n_vars < 0 ? mesh.n_vars() - first_var : n_vars), fill_(fill) {
  if (first_ < 0 || count_ < 1 || first_ + count_ > mesh.n_vars())
    throw Error(fmt::format("ForestFillIterator: variables [{}, {}) are not in the mesh's 0..{}", first_,
                            first_ + count_, mesh.n_vars() - 1));
}

// Whose fill reads a leaf: the leaves near it, as near is symmetric (ForestMesh's ghosts).
void ForestFillIterator::plan_readers() {
  const auto& own = mesh_.own_leaves();
  readers_.assign(own.size(), {});
  if (fill_ == Fill::on_hand_out)
    for (std::size_t b = 0; b < own.size(); ++b)
      for (const BlockKey& near : detail::leaves_near(mesh_.forest(), own[b], 2)) {
        const int id = mesh_.own_block(near);
        if (id >= 0 && id != static_cast<int>(b)) readers_[b].push_back(id);
      }
  planned_version_ = mesh_.leaves_version();
  planned_ = true;
}

void ForestFillIterator::begin(const DataSource& source) {
  if (&source != &mesh_.leaf_source())
    throw Error(
        fmt::format("ForestFillIterator: the cycle runs on {}, but the iterator's mesh lists its leaves in {}: "
                    "pass the mesh's leaves (ForestMesh::blocks(), or the code's list of a ForestBlocks) to "
                    "Runtime::execute",
                    source.source_name(), mesh_.leaf_source().source_name()));
  if (!planned_ || planned_version_ != mesh_.leaves_version()) plan_readers();
  const std::size_t n = mesh_.own_leaves().size();
  complete_.assign(n, 0);
  filled_.assign(n, 0);
  queued_.assign(n, 0);
  ready_.clear();
  early_ = 0;
  // Only the variables this cycle fills travel.
  mesh_.start_ghost_copies(fill_ == Fill::on_hand_out ? ForestLeaves::FillBy::iterator : ForestLeaves::FillBy::action,
                           first_, count_);
  for (const int b : mesh_.leaves_without_ghosts()) mark_complete(b);
}

// A leaf goes out once its guard cells can be filled, and on_hand_out once those of its readers can be.
bool ForestFillIterator::ready(int block) const {
  if (!complete_[static_cast<std::size_t>(block)]) return false;
  for (const int r : readers_[static_cast<std::size_t>(block)])
    if (!complete_[static_cast<std::size_t>(r)]) return false;
  return true;
}

void ForestFillIterator::mark_complete(int block) {
  complete_[static_cast<std::size_t>(block)] = 1;
  const auto queue = [&](int b) {
    if (!queued_[static_cast<std::size_t>(b)] && ready(b)) {
      queued_[static_cast<std::size_t>(b)] = 1;
      ready_.push_back(b);
    }
  };
  queue(block);
  for (const int r : readers_[static_cast<std::size_t>(block)]) queue(r);  // near is symmetric
}

std::optional<int> ForestFillIterator::next() {
  while (ready_.empty() && mesh_.ghost_messages_outstanding() > 0)
    for (const int b : mesh_.wait_for_ghosts()) mark_complete(b);
  if (ready_.empty()) {
    mesh_.finish_ghost_copies();
    return std::nullopt;
  }
  const int b = ready_.front();
  ready_.pop_front();
  if (fill_ == Fill::on_hand_out) {
    // Its readers copy its cells before the cycle may write them, then it fills its own.
    for (const int r : readers_[static_cast<std::size_t>(b)])
      if (!filled_[static_cast<std::size_t>(r)]) {
        mesh_.fill_guard_cells(r, first_, count_);
        filled_[static_cast<std::size_t>(r)] = 1;
      }
    if (!filled_[static_cast<std::size_t>(b)]) mesh_.fill_guard_cells(b, first_, count_);
    filled_[static_cast<std::size_t>(b)] = 1;
  }
  if (mesh_.ghost_messages_outstanding() > 0) ++early_;
  return b;
}

void ForestFillIterator::abandon() noexcept {
  ready_.clear();
  mesh_.abandon_ghost_copies();
}

}  // namespace korch
