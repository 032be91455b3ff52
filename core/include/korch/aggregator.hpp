// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Data item aggregator: tiles -> blocks, tiles or blocks -> packets, tiles or blocks -> action
// metadata (one item per complete block, for device teams that find the block's data themselves;
// the planner puts one where host stages hand on to device stages). Tiles are held per
// block until every tile of the block has arrived; only complete blocks go into a packet, and all
// tiles of a block go into the same packet, so a packet never waits for a tile that is elsewhere
// (docs/data-packets.md). A packet is emitted (packed on the host) when it holds `packet_blocks`
// blocks; flush() emits the last, partial one at the end of the cycle. Thread-safe: several helper
// threads may add at once.
#pragma once

#include <korch/backend/memory_pool.hpp>
#include <korch/data_packet.hpp>
#include <korch/data_type.hpp>
#include <korch/data_source.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace korch {

class Aggregator {
 public:
  Aggregator(std::string name, const DataSource& source, DataType input, DataType output, std::size_t packet_blocks,
             PacketVariables variables, MemoryPool& pinned_pool, MemoryPool& device_pool);

  // Takes one tile or block; returns the aggregates it completed (often none).
  std::vector<std::shared_ptr<DataItem>> add(const DataItem& item);
  // The partial packet, if any. Throws korch::Error when blocks are still incomplete (a publisher
  // did not route every tile of a block here), naming the aggregator and the blocks.
  std::vector<std::shared_ptr<DataItem>> flush();
  std::size_t incomplete_blocks() const;

 private:
  std::shared_ptr<DataItem> make_packet(const std::vector<int>& blocks) const;
  int tiles_in(int block) const { return static_cast<int>(source_->tiles_of(block).size()); }

  std::string name_;
  const DataSource* source_;
  DataType input_, output_;
  std::size_t packet_blocks_;
  PacketVariables variables_;
  MemoryPool* pinned_;
  MemoryPool* device_;
  mutable std::mutex mutex_;
  std::map<int, int> tiles_seen_;  // block -> tiles received
  std::vector<int> pending_blocks_;
};

}  // namespace korch
