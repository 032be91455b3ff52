// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/helper.hpp>

#include <korch/block.hpp>
#include <korch/data_mover.hpp>
#include <korch/error.hpp>
#include <korch/fault_injection.hpp>
#include <korch/splitter.hpp>
#include <korch/tile.hpp>
#include <korch/unpacker.hpp>

#include <fmt/format.h>

namespace korch {

Helper::Helper(HelperConfig config, const DataSource& source, MemoryPool& pinned_pool, MemoryPool& device_pool)
    : config_(std::move(config)) {
  if (config_.kind == HelperKind::aggregator || config_.kind == HelperKind::aggregator_mover) {
    aggregator_.emplace(config_.name, source, config_.input, config_.output, config_.packet_blocks, config_.variables,
                        pinned_pool, device_pool);
  }
  if (config_.kind == HelperKind::router) {
    router_ = std::make_unique<Router>(config_.name, config_.fraction, config_.unit);
  }
}

namespace {
DataPacket& as_packet(DataItem& item, const std::string& helper) {
  auto* p = dynamic_cast<DataPacket*>(&item);
  if (!p) throw Error::format("helper '{}' takes data packets but got {}", helper, item.describe());
  return *p;
}
}  // namespace

void Helper::finish_aggregate(const ActionContext& ctx, std::shared_ptr<DataItem> item, Trace* trace) {
  if (config_.kind == HelperKind::aggregator_mover) {
    TraceScope s(trace, "host_to_device", "transfer", config_.name, ctx.thread_index(),
                 trace ? item->describe() : std::string());
    s.set_bytes(move(MoveDirection::host_to_device, static_cast<DataPacket&>(*item), ctx));
  }
  ctx.emit(std::move(item));
}

void Helper::process(const ActionContext& ctx, DataItem& item, Trace* trace) {
  faults::pass(faults::Point::helper_item);
  const unsigned th = ctx.thread_index();
  const std::string what = trace ? item.describe() : std::string();
  switch (config_.kind) {
    case HelperKind::mover: {
      TraceScope s(trace, to_string(config_.direction), "transfer", config_.name, th, what);
      s.set_bytes(move(config_.direction, as_packet(item, config_.name), ctx));
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
        s.set_bytes(move(MoveDirection::device_to_host, p, ctx));
      }
      {
        TraceScope s(trace, "unpack", "helper", config_.name, th, what);
        Unpacker()(p);
      }
      if (config_.kind == HelperKind::mover_unpacker) return;
      TraceScope s(trace, "split", "helper", config_.name, th, what);
      for (auto& piece : Splitter(config_.output).split(p)) ctx.emit(std::move(piece));
      return;
    }
    case HelperKind::splitter: {
      TraceScope s(trace, "split", "helper", config_.name, th, what);
      for (auto& piece : Splitter(config_.output).split(item)) ctx.emit(std::move(piece));
      return;
    }
    case HelperKind::aggregator:
    case HelperKind::aggregator_mover: {
      std::vector<std::shared_ptr<DataItem>> done;
      {
        TraceScope s(trace, "aggregate", "helper", config_.name, th, what);
        done = aggregator_->add(item);
      }
      for (auto& d : done) finish_aggregate(ctx, std::move(d), trace);
      return;
    }
    case HelperKind::router: {
      TraceScope s(trace, "route", "helper", config_.name, th, what);
      const std::size_t branch = router_->route(item);
      if (!pushes_[branch]) {
        throw Error::format(
            "router '{}' has no way to reach '{}': the cycle connects a router (route_to) before it "
            "starts",
            config_.name, config_.to.at(branch));
      }
      pushes_[branch](router_->hand_on(item));
      return;
    }
  }
}

std::uint64_t Helper::move(MoveDirection direction, DataPacket& packet, const ActionContext& ctx) {
  const TransferBytes moved = DataMover{direction}(packet, ctx.device_space());
  moved_[0].fetch_add(moved.host_to_device, std::memory_order_relaxed);
  moved_[1].fetch_add(moved.device_to_host, std::memory_order_relaxed);
  moved_[2].fetch_add(moved.device_to_device, std::memory_order_relaxed);
  return moved.total();
}

TransferBytes Helper::transfers() const noexcept {
  TransferBytes t;
  t.host_to_device = moved_[0].load(std::memory_order_relaxed);
  t.device_to_host = moved_[1].load(std::memory_order_relaxed);
  t.device_to_device = moved_[2].load(std::memory_order_relaxed);
  return t;
}

void Helper::flush(const ActionContext& ctx, Trace* trace) {
  if (!aggregator_) return;
  for (auto& d : aggregator_->flush()) finish_aggregate(ctx, std::move(d), trace);
}

ActionRoutine Helper::routine(Trace* trace) {
  auto each = [this, trace](const ActionContext& ctx, DataItem& item) { process(ctx, item, trace); };
  if (!emits(config_.kind)) return ActionRoutine(config_.name, std::move(each));
  if (!aggregator_) return ActionRoutine::emitting(config_.name, std::move(each));
  return ActionRoutine::emitting(config_.name, std::move(each),
                                 [this, trace](const ActionContext& ctx) { flush(ctx, trace); });
}

}  // namespace korch
