// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "forest_ghosts.hpp"

#include "forest_ranks.hpp"
#include "../ranks/peer_messages.hpp"

#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

namespace korch::detail {

ForestGhosts::ForestGhosts(const Communicator& comm, std::string who) : comm_(comm), who_(std::move(who)) {}

ForestGhosts::~ForestGhosts() { abandon(); }

// The leaves within two neighbours of a leaf hold every cell its guard cells read (guard cells at
// most half a block wide; prolongation's slopes reach one coarse cell beyond a coarser neighbour).
// Being near is symmetric: the leaves this rank sends to a rank are those that read its leaves.
void ForestGhosts::plan(const BlockForest& forest, const std::vector<int>& owners, const std::vector<BlockKey>& own,
                        std::size_t block_values) {
  // The buffers below are where messages in flight land.
  if (in_flight_)
    throw Error(
        fmt::format("{} on rank {}: the leaves changed while copies of other ranks' leaves were in flight: "
                    "finish_ghost_copies() before a regrid or a new list of leaves",
                    who_, comm_.rank()));
  const std::size_t ranks = static_cast<std::size_t>(comm_.size());
  block_values_ = block_values;
  sends_.assign(ranks, {});
  receives_.assign(ranks, {});
  waiters_.assign(ranks, {});
  ranks_read_.assign(own.size(), 0);
  without_.clear();
  if (!messages_ && ranks > 1) messages_ = std::make_unique<PeerMessages>(comm_, who_);
  std::vector<std::vector<int>> receive_index(ranks);
  std::unordered_set<BlockKey, BlockKeyHash> listed;
  for (int b = 0; b < static_cast<int>(own.size()) && ranks > 1; ++b) {
    const BlockKey& leaf = own[static_cast<std::size_t>(b)];
    std::vector<bool> to(ranks, false);
    for (const BlockKey& near : leaves_near(forest, leaf, 2)) {
      const int index = forest.leaf_index(near);
      const int r = owners[static_cast<std::size_t>(index)];
      if (r == comm_.rank()) continue;
      to[static_cast<std::size_t>(r)] = true;
      if (listed.insert(near).second) receive_index[static_cast<std::size_t>(r)].push_back(index);
    }
    for (std::size_t r = 0; r < ranks; ++r)
      if (to[r]) {
        sends_[r].push_back(leaf);
        waiters_[r].push_back(b);
        ++ranks_read_[static_cast<std::size_t>(b)];
      }
  }
  for (int b = 0; b < static_cast<int>(own.size()); ++b)
    if (ranks_read_[static_cast<std::size_t>(b)] == 0) without_.push_back(b);
  send_buffers_.assign(ranks, {});
  receive_buffers_.assign(ranks, {});
  for (std::size_t r = 0; r < ranks; ++r) {
    // Both sides order a message's leaves along the curve, whatever this rank's block order.
    std::sort(sends_[r].begin(), sends_[r].end(),
              [&](const BlockKey& a, const BlockKey& b) { return forest.leaf_index(a) < forest.leaf_index(b); });
    std::sort(receive_index[r].begin(), receive_index[r].end());
    for (int index : receive_index[r]) receives_[r].push_back(forest.leaves()[static_cast<std::size_t>(index)]);
    send_buffers_[r].resize(sends_[r].size() * block_values_);
    receive_buffers_[r].resize(receives_[r].size() * block_values_);
  }
}

void ForestGhosts::start(const Pack& pack) {
  if (in_flight_)
    throw Error(
        fmt::format("{} on rank {}: start_ghost_copies() while copies are in flight: call finish_ghost_copies() "
                    "(or abandon_ghost_copies()) first",
                    who_, comm_.rank()));
  pending_ = ranks_read_;
  in_flight_ = true;
  for (std::size_t r = 0; r < receives_.size(); ++r)
    if (!receives_[r].empty())
      messages_->receive(static_cast<int>(r), receive_buffers_[r].data(), receive_buffers_[r].size(),
                         static_cast<int>(r));
  for (std::size_t r = 0; r < sends_.size(); ++r) {
    if (sends_[r].empty()) continue;
    double* out = send_buffers_[r].data();
    for (const BlockKey& leaf : sends_[r]) {
      pack(leaf, out);
      out += block_values_;
    }
    messages_->send(static_cast<int>(r), send_buffers_[r].data(), send_buffers_[r].size());
  }
}

int ForestGhosts::outstanding() const noexcept {
  return in_flight_ && messages_ ? messages_->receives_outstanding() : 0;
}

std::vector<int> ForestGhosts::wait(const Unpack& unpack) {
  if (!in_flight_)
    throw Error(
        fmt::format("{} on rank {}: wait_for_ghosts() without copies in flight: call "
                    "start_ghost_copies() first",
                    who_, comm_.rank()));
  std::vector<int> ready;
  if (!messages_) return ready;
  for (const int r : messages_->wait_some_receives()) {
    const auto& from = receives_[static_cast<std::size_t>(r)];
    const double* in = receive_buffers_[static_cast<std::size_t>(r)].data();
    for (std::size_t g = 0; g < from.size(); ++g) unpack(from[g], in + g * block_values_);
    for (const int b : waiters_[static_cast<std::size_t>(r)])
      if (--pending_[static_cast<std::size_t>(b)] == 0) ready.push_back(b);
  }
  std::sort(ready.begin(), ready.end());
  return ready;
}

void ForestGhosts::finish() {
  if (!in_flight_) return;
  if (outstanding() > 0)
    throw Error(
        fmt::format("{} on rank {}: finish_ghost_copies() before every copy arrived: call wait_for_ghosts() "
                    "until ghost_messages_outstanding() is 0",
                    who_, comm_.rank()));
  if (messages_) messages_->wait_sends();
  in_flight_ = false;
}

void ForestGhosts::abandon() noexcept {
  if (!in_flight_) return;
  if (messages_) messages_->abandon();
  in_flight_ = false;
}

}  // namespace korch::detail
