// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/aggregator.hpp>

#include <korch/action_metadata.hpp>
#include <korch/block.hpp>
#include <korch/error.hpp>
#include <korch/tile.hpp>

#include <fmt/format.h>

namespace korch {

Aggregator::Aggregator(std::string name, const DataSource& source, DataType input, DataType output,
                       std::size_t packet_blocks, PacketVariables variables, MemoryPool& pinned_pool,
                       MemoryPool& device_pool)
    : name_(std::move(name)),
      source_(&source),
      input_(input),
      output_(output),
      packet_blocks_(packet_blocks == 0 ? 1 : packet_blocks),
      variables_(std::move(variables)),
      pinned_(&pinned_pool),
      device_(&device_pool) {}

std::shared_ptr<DataItem> Aggregator::make_packet(const std::vector<int>& blocks) const {
  auto packet = std::make_shared<DataPacket>(*source_, output_, variables_, *pinned_, *device_);
  for (int b : blocks) {
    if (output_ == DataType::packet_of_blocks) {
      packet->add_block(b);
    } else {
      for (int t = 0; t < tiles_in(b); ++t) packet->add_tile(b, t);
    }
  }
  packet->pack();
  return packet;
}

std::vector<std::shared_ptr<DataItem>> Aggregator::add(const DataItem& item) {
  int block = -1;
  bool complete = false;
  std::vector<int> full;
  if (input_ == DataType::tile) {
    auto* tile = dynamic_cast<const Tile*>(&item);
    if (!tile) throw Error::format("aggregator '{}' takes tiles but got {}", name_, item.describe());
    block = tile->block_id();
    std::lock_guard<std::mutex> lock(mutex_);
    int& seen = tiles_seen_[block];
    if (++seen == tiles_in(block)) {
      tiles_seen_.erase(block);
      complete = true;
    }
  } else {
    auto* b = dynamic_cast<const Block*>(&item);
    if (!b) throw Error::format("aggregator '{}' takes blocks but got {}", name_, item.describe());
    block = b->block_id();
    complete = true;
  }
  std::vector<std::shared_ptr<DataItem>> out;
  if (!complete) return out;
  if (output_ == DataType::block) {
    out.push_back(std::make_shared<Block>(*source_, block));
    return out;
  }
  if (output_ == DataType::action_metadata) {
    // The block is complete on the host: a device team may now work on it (docs/data-packets.md).
    out.push_back(std::make_shared<ActionMetadata>(block));
    return out;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_blocks_.push_back(block);
    if (pending_blocks_.size() >= packet_blocks_) full.swap(pending_blocks_);
  }
  if (!full.empty()) out.push_back(make_packet(full));
  return out;
}

std::vector<std::shared_ptr<DataItem>> Aggregator::flush() {
  std::vector<int> rest;
  std::string missing;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    rest.swap(pending_blocks_);
    for (const auto& [b, n] : tiles_seen_)
      missing += fmt::format("{}block {} ({} of {} tiles)", missing.empty() ? "" : ", ", b, n, tiles_in(b));
    tiles_seen_.clear();
  }
  if (!missing.empty()) {
    throw Error::format(
        "aggregator '{}' holds incomplete blocks at the end of the cycle: {}: its publisher must route every "
        "tile of a block to it (distributor unit block)",
        name_, missing);
  }
  std::vector<std::shared_ptr<DataItem>> out;
  if (!rest.empty()) out.push_back(make_packet(rest));
  return out;
}

std::size_t Aggregator::incomplete_blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return tiles_seen_.size();
}

}  // namespace korch
