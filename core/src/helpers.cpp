#include <korch/block.hpp>
#include <korch/data_mover.hpp>
#include <korch/error.hpp>
#include <korch/helper.hpp>
#include <korch/splitter.hpp>
#include <korch/tile.hpp>
#include <korch/unpacker.hpp>

#include <fmt/format.h>

namespace korch {

void DataMover::operator()(DataPacket& packet, const DeviceTaskSpace& instance) const {
  switch (direction_) {
    case MoveDirection::host_to_device: packet.copy_to_device(instance); break;
    case MoveDirection::device_to_host: packet.copy_to_host(instance); break;
    case MoveDirection::device_to_device: packet.move_on_device(instance); break;
  }
  instance.fence();
}

std::vector<std::shared_ptr<DataItem>> Splitter::split(const DataItem& item) const {
  std::vector<std::shared_ptr<DataItem>> out;
  if (auto* block = dynamic_cast<const Block*>(&item)) {
    if (output_ != DataType::tile) {
      throw Error::format("splitter: {} can only be split into tiles, not {}", item.describe(), to_string(output_));
    }
    for (auto& t : block->tiles()) out.push_back(std::move(t));
    return out;
  }
  auto* packet = dynamic_cast<const DataPacket*>(&item);
  if (!packet) {
    throw Error::format("splitter: {} is neither a block nor a data packet: only those can be split", item.describe());
  }
  if (packet->state() != DataPacket::State::unpacked) {
    throw Error::format("splitter: {} is not unpacked: unpack it (mover_unpacker) before splitting", packet->describe());
  }
  const Grid& grid = packet->grid();
  if (packet->data_type() == DataType::packet_of_blocks) {
    for (int b : packet->block_ids()) {
      if (output_ == DataType::block) {
        out.push_back(std::make_shared<Block>(grid, b));
      } else if (output_ == DataType::tile) {
        for (int t = 0; t < grid.tiles_per_block(); ++t) out.push_back(std::make_shared<Tile>(grid, b, t));
      } else {
        throw Error::format("splitter: cannot split {} into {}", packet->describe(), to_string(output_));
      }
    }
  } else {
    if (output_ != DataType::tile) {
      throw Error::format("splitter: a packet of tiles splits into tiles, not {}", to_string(output_));
    }
    for (std::size_t i = 0; i < packet->size(); ++i) {
      out.push_back(std::make_shared<Tile>(grid, packet->entry(i).block, packet->entry(i).tile));
    }
  }
  return out;
}

Aggregator::Aggregator(std::string name, const Grid& grid, DataType input, DataType output, std::size_t packet_blocks,
                       PacketVariables variables, MemoryPool& pinned_pool, MemoryPool& device_pool)
    : name_(std::move(name)),
      grid_(&grid),
      input_(input),
      output_(output),
      packet_blocks_(packet_blocks == 0 ? 1 : packet_blocks),
      variables_(std::move(variables)),
      pinned_(&pinned_pool),
      device_(&device_pool) {}

std::shared_ptr<DataItem> Aggregator::make_packet(const std::vector<int>& blocks) const {
  auto packet = std::make_shared<DataPacket>(*grid_, output_, variables_, *pinned_, *device_);
  for (int b : blocks) {
    if (output_ == DataType::packet_of_blocks) {
      packet->add_block(b);
    } else {
      for (int t = 0; t < grid_->tiles_per_block(); ++t) packet->add_tile(b, t);
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
    if (++seen == grid_->tiles_per_block()) {
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
    out.push_back(std::make_shared<Block>(*grid_, block));
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
    for (const auto& [b, n] : tiles_seen_) missing += fmt::format("{}block {} ({} of {} tiles)", missing.empty() ? "" : ", ", b, n, grid_->tiles_per_block());
    tiles_seen_.clear();
  }
  if (!missing.empty()) {
    throw Error::format("aggregator '{}' holds incomplete blocks at the end of the cycle: {}: its publisher must route every "
                        "tile of a block to it (distributor unit block)", name_, missing);
  }
  std::vector<std::shared_ptr<DataItem>> out;
  if (!rest.empty()) out.push_back(make_packet(rest));
  return out;
}

std::size_t Aggregator::incomplete_blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return tiles_seen_.size();
}

Helper::Helper(HelperConfig config, const Grid& grid, MemoryPool& pinned_pool, MemoryPool& device_pool)
    : config_(std::move(config)) {
  if (config_.kind == HelperKind::aggregator || config_.kind == HelperKind::aggregator_mover) {
    aggregator_.emplace(config_.name, grid, config_.input, config_.output, config_.packet_blocks, config_.variables,
                        pinned_pool, device_pool);
  }
}

namespace {
DataPacket& as_packet(DataItem& item, const std::string& helper) {
  auto* p = dynamic_cast<DataPacket*>(&item);
  if (!p) throw Error::format("helper '{}' takes data packets but got {}", helper, item.describe());
  return *p;
}
}  // namespace

void Helper::finish_aggregate(const DeviceTaskSpace& instance, std::shared_ptr<DataItem> item, const Emit& emit,
                              Trace* trace, unsigned thread) {
  if (config_.kind == HelperKind::aggregator_mover) {
    TraceScope s(trace, "host_to_device", "transfer", config_.name, thread, trace ? item->describe() : std::string());
    DataMover{MoveDirection::host_to_device}(static_cast<DataPacket&>(*item), instance);
  }
  emit(std::move(item));
}

void Helper::process(const ActionContext& ctx, DataItem& item, const Emit& emit, Trace* trace) {
  const unsigned th = ctx.thread_index();
  const std::string what = trace ? item.describe() : std::string();
  switch (config_.kind) {
    case HelperKind::mover: {
      TraceScope s(trace, to_string(config_.direction), "transfer", config_.name, th, what);
      DataMover{config_.direction}(as_packet(item, config_.name), ctx.device_space());
      return;
    }
    case HelperKind::unpacker: {
      TraceScope s(trace, "unpack", "helper", config_.name, th, what);
      Unpacker()(as_packet(item, config_.name));
      return;
    }
    case HelperKind::mover_unpacker:
    case HelperKind::mover_unpacker_splitter: {
      auto& p = as_packet(item, config_.name);
      {
        TraceScope s(trace, "device_to_host", "transfer", config_.name, th, what);
        DataMover{MoveDirection::device_to_host}(p, ctx.device_space());
      }
      {
        TraceScope s(trace, "unpack", "helper", config_.name, th, what);
        Unpacker()(p);
      }
      if (config_.kind == HelperKind::mover_unpacker) return;
      TraceScope s(trace, "split", "helper", config_.name, th, what);
      for (auto& piece : Splitter(config_.output).split(p)) emit(std::move(piece));
      return;
    }
    case HelperKind::splitter: {
      TraceScope s(trace, "split", "helper", config_.name, th, what);
      for (auto& piece : Splitter(config_.output).split(item)) emit(std::move(piece));
      return;
    }
    case HelperKind::aggregator:
    case HelperKind::aggregator_mover: {
      std::vector<std::shared_ptr<DataItem>> done;
      {
        TraceScope s(trace, "aggregate", "helper", config_.name, th, what);
        done = aggregator_->add(item);
      }
      for (auto& d : done) finish_aggregate(ctx.device_space(), std::move(d), emit, trace, th);
      return;
    }
  }
}

void Helper::flush(const DeviceTaskSpace& instance, const Emit& emit) {
  if (!aggregator_) return;
  for (auto& d : aggregator_->flush()) finish_aggregate(instance, std::move(d), emit, nullptr, 0);
}

ActionRoutine Helper::routine(Emit emit, Trace* trace) {
  return ActionRoutine(config_.name, [this, emit = std::move(emit), trace](const ActionContext& ctx, DataItem& item) {
    process(ctx, item, emit, trace);
  });
}

}  // namespace korch
