// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ForestMesh: the copies of the other ranks' leaves that this rank's guard fills read (ghosts),
// planned per regrid and exchanged per fill, at once or in steps (docs/adaptive-mesh.md, "On ranks").
#include "forest_ranks.hpp"
#include "../ranks/peer_messages.hpp"

#include <korch/error.hpp>
#include <korch/forest_mesh.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace korch {

ForestMesh::~ForestMesh() { abandon_ghost_copies(); }

// The leaves within two neighbours of a leaf hold every cell its guard cells read (guard cells at
// most half a block wide; prolongation's slopes reach one coarse cell beyond a coarser neighbour).
// Being near is symmetric: the leaves this rank sends to a rank are those that read its leaves.
void ForestMesh::plan_ghosts() {
  // The buffers below are where messages in flight land.
  if (ghosts_in_flight_)
    throw Error(
        fmt::format("ForestMesh '{}' on rank {}: the leaves changed while copies of other ranks' leaves "
                    "were in flight: finish_ghost_copies() before a regrid",
                    name_, comm_.rank()));
  const std::size_t ranks = static_cast<std::size_t>(comm_.size());
  ghost_sends_.assign(ranks, {});
  ghost_receives_.assign(ranks, {});
  ghost_waiters_.assign(ranks, {});
  ghost_ranks_.assign(own_.size(), 0);
  without_ghosts_.clear();
  if (!ghost_messages_) ghost_messages_ = std::make_unique<detail::PeerMessages>(comm_, "ForestMesh '" + name_ + "'");
  std::vector<std::vector<int>> receive_index(ranks);
  std::unordered_map<BlockKey, bool, BlockKeyHash> listed;
  for (int b = 0; b < static_cast<int>(own_.size()) && ranks > 1; ++b) {
    const BlockKey& leaf = own_[static_cast<std::size_t>(b)];
    std::vector<bool> to(ranks, false);
    for (const BlockKey& near : detail::leaves_near(forest_, leaf, 2)) {
      const int index = forest_.leaf_index(near);
      const int r = owners_[static_cast<std::size_t>(index)];
      if (r == comm_.rank()) continue;
      to[static_cast<std::size_t>(r)] = true;
      if (listed.emplace(near, true).second) receive_index[static_cast<std::size_t>(r)].push_back(index);
    }
    for (std::size_t r = 0; r < ranks; ++r)
      if (to[r]) {
        ghost_sends_[r].push_back(leaf);
        ghost_waiters_[r].push_back(b);
        ++ghost_ranks_[static_cast<std::size_t>(b)];
      }
  }
  for (int b = 0; b < static_cast<int>(own_.size()); ++b)
    if (ghost_ranks_[static_cast<std::size_t>(b)] == 0) without_ghosts_.push_back(b);
  const std::size_t block = fresh_block().size();
  ghost_send_buffers_.assign(ranks, {});
  ghost_receive_buffers_.assign(ranks, {});
  for (std::size_t r = 0; r < ranks; ++r) {
    std::sort(receive_index[r].begin(), receive_index[r].end());
    for (int index : receive_index[r]) {
      const BlockKey& ghost = forest_.leaves()[static_cast<std::size_t>(index)];
      ghost_receives_[r].push_back(ghost);
      if (data_.count(ghost) == 0) data_[ghost] = fresh_block();
    }
    ghost_send_buffers_[r].resize(ghost_sends_[r].size() * block);
    ghost_receive_buffers_[r].resize(ghost_receives_[r].size() * block);
  }
}

void ForestMesh::exchange_ghost_leaves() {
  start_ghost_copies();
  while (ghost_messages_outstanding() > 0) wait_for_ghosts();
  finish_ghost_copies();
}

void ForestMesh::start_ghost_copies() {
  if (ghosts_in_flight_)
    throw Error(
        fmt::format("ForestMesh '{}' on rank {}: start_ghost_copies() while copies are in flight: call "
                    "finish_ghost_copies() (or abandon_ghost_copies()) first",
                    name_, comm_.rank()));
  ghosts_pending_ = ghost_ranks_;
  ghosts_in_flight_ = true;
  const std::size_t block = fresh_block().size();
  for (std::size_t r = 0; r < ghost_receives_.size(); ++r)
    if (!ghost_receives_[r].empty())
      ghost_messages_->receive(static_cast<int>(r), ghost_receive_buffers_[r].data(), ghost_receive_buffers_[r].size(),
                               static_cast<int>(r));
  for (std::size_t r = 0; r < ghost_sends_.size(); ++r) {
    if (ghost_sends_[r].empty()) continue;
    double* out = ghost_send_buffers_[r].data();
    for (const BlockKey& leaf : ghost_sends_[r]) out = std::copy_n(data_.at(leaf).begin(), block, out);
    ghost_messages_->send(static_cast<int>(r), ghost_send_buffers_[r].data(), ghost_send_buffers_[r].size());
  }
}

int ForestMesh::ghost_messages_outstanding() const noexcept {
  return ghosts_in_flight_ ? ghost_messages_->receives_outstanding() : 0;
}

std::vector<int> ForestMesh::wait_for_ghosts() {
  if (!ghosts_in_flight_)
    throw Error(
        fmt::format("ForestMesh '{}' on rank {}: wait_for_ghosts() without copies in flight: call "
                    "start_ghost_copies() first",
                    name_, comm_.rank()));
  std::vector<int> ready;
  const std::size_t block = fresh_block().size();
  for (const int r : ghost_messages_->wait_some_receives()) {
    const auto& from = ghost_receives_[static_cast<std::size_t>(r)];
    const double* in = ghost_receive_buffers_[static_cast<std::size_t>(r)].data();
    for (std::size_t g = 0; g < from.size(); ++g) std::copy_n(in + g * block, block, data_.at(from[g]).begin());
    for (const int b : ghost_waiters_[static_cast<std::size_t>(r)])
      if (--ghosts_pending_[static_cast<std::size_t>(b)] == 0) ready.push_back(b);
  }
  std::sort(ready.begin(), ready.end());
  return ready;
}

void ForestMesh::finish_ghost_copies() {
  if (!ghosts_in_flight_) return;
  if (ghost_messages_->receives_outstanding() > 0)
    throw Error(
        fmt::format("ForestMesh '{}' on rank {}: finish_ghost_copies() before every copy arrived: call "
                    "wait_for_ghosts() until ghost_messages_outstanding() is 0",
                    name_, comm_.rank()));
  ghost_messages_->wait_sends();
  ghosts_in_flight_ = false;
}

void ForestMesh::abandon_ghost_copies() noexcept {
  if (!ghosts_in_flight_) return;
  ghost_messages_->abandon();
  ghosts_in_flight_ = false;
}

}  // namespace korch
