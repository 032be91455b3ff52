// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Internal: the copies of other ranks' leaves that this rank's guard fills read (ghosts), for any
// adaptive mesh whose every rank holds the whole forest and knows each leaf's owner (ForestMesh,
// ForestBlocks; docs/adaptive-mesh.md, "On ranks"). Planned once per list of leaves, exchanged per
// fill, at once or in steps; every leaf travels whole, as `block_values` doubles that the mesh packs
// and unpacks in an order both sides share.
#pragma once

#include <korch/block_forest.hpp>
#include <korch/communicator.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace korch::detail {

class PeerMessages;

class ForestGhosts {
 public:
  // `who` names the mesh in errors ("ForestMesh 'density'").
  ForestGhosts(const Communicator& comm, std::string who);
  ~ForestGhosts();
  ForestGhosts(const ForestGhosts&) = delete;
  ForestGhosts& operator=(const ForestGhosts&) = delete;

  // Works out who sends what from the replicated forest: `owners` per leaf index, `own` this
  // rank's leaves in block id order. Throws korch::Error while copies are in flight.
  void plan(const BlockForest& forest, const std::vector<int>& owners, const std::vector<BlockKey>& own,
            std::size_t block_values);
  // Per rank: the leaves this rank receives from it (ghosts), in the order they arrive.
  const std::vector<std::vector<BlockKey>>& receives() const noexcept { return receives_; }
  // Blocks (ids ascending) whose fill reads no other rank's leaf.
  const std::vector<int>& without_ghosts() const noexcept { return without_; }

  using Pack = std::function<void(const BlockKey& leaf, double* out)>;
  using Unpack = std::function<void(const BlockKey& ghost, const double* in)>;
  // Posts the receives and sends this rank's leaves that other ranks read, packed by `pack`.
  void start(const Pack& pack);
  // Waits until a message arrived, unpacks its leaves and returns the blocks it completed.
  std::vector<int> wait(const Unpack& unpack);
  int outstanding() const noexcept;
  void finish();
  void abandon() noexcept;
  bool in_flight() const noexcept { return in_flight_; }

 private:
  Communicator comm_;
  std::string who_;
  std::size_t block_values_ = 0;
  std::vector<std::vector<BlockKey>> sends_, receives_;  // per rank
  std::vector<std::vector<double>> send_buffers_, receive_buffers_;
  std::vector<std::vector<int>> waiters_;  // per rank: this rank's blocks that read its leaves
  std::vector<int> ranks_read_;            // per block: how many other ranks own leaves it reads
  std::vector<int> pending_;               // per block: those not yet received in this fill
  std::vector<int> without_;
  std::unique_ptr<PeerMessages> messages_;
  bool in_flight_ = false;
};

}  // namespace korch::detail
