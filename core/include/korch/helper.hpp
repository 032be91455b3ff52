// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A thread team helper (docs/data-packets.md): mover, unpacker, splitter, aggregator and the composites
// mover+unpacker, mover+unpacker+splitter, aggregator+mover. The Runtime runs each helper on a
// helper thread team of its own (so moves overlap computation); the helper's routine applies its
// steps to each item. Like every node, a helper hands its outputs on through its team's work
// subscription: movers and unpackers hand on the item they were given, the others emit new items
// (ActionContext::emit), an aggregator its last, partial packet in the routine's end-of-cycle step.
// The one exception is a router (router.hpp), which has two subscribers: it pushes each item into
// the one it chose, through the pushes the cycle gives it (route_to), and its team has no work
// subscriber; the cycle closes both subscribers' queues once the router's team is Idle.
#pragma once

#include <korch/action_routine.hpp>
#include <korch/aggregator.hpp>
#include <korch/configuration.hpp>
#include <korch/data_mover.hpp>
#include <korch/router.hpp>
#include <korch/trace.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace korch {

class Helper {
 public:
  Helper(HelperConfig config, const DataSource& source, MemoryPool& pinned_pool, MemoryPool& device_pool);

  const HelperConfig& config() const noexcept { return config_; }
  const std::string& name() const noexcept { return config_.name; }
  // Whether the helper's outputs are new items (emitted) rather than the item it was given.
  static bool emits(HelperKind kind) noexcept {
    return !(kind == HelperKind::mover || kind == HelperKind::unpacker || kind == HelperKind::mover_unpacker ||
             kind == HelperKind::router);
  }

  // Routers: how to give an item to each of config().to (in that order). Set before the cycle starts.
  using Push = std::function<void(std::shared_ptr<DataItem>)>;
  void route_to(std::array<Push, 2> pushes) { pushes_ = std::move(pushes); }

  // One item, on a helper-team thread (uses context.device_space() for transfers).
  void process(const ActionContext& context, DataItem& item, Trace* trace);
  // End of cycle (aggregators: emits the partial packet, moved to the device on the context's
  // instance for aggregator_mover). Throws when an aggregator still holds incomplete blocks.
  void flush(const ActionContext& context, Trace* trace);
  // process() as the routine of the helper's team (with flush as its end-of-cycle step).
  ActionRoutine routine(Trace* trace);
  // What the helper's moves copied since it was made (read once its team is Idle).
  TransferBytes transfers() const noexcept;

 private:
  void finish_aggregate(const ActionContext& context, std::shared_ptr<DataItem> item, Trace* trace);
  std::uint64_t move(MoveDirection direction, DataPacket& packet, const ActionContext& context);
  HelperConfig config_;
  std::optional<Aggregator> aggregator_;
  std::unique_ptr<Router> router_;
  std::array<Push, 2> pushes_;
  std::array<std::atomic<std::uint64_t>, 3> moved_{};  // by MoveDirection: several team threads move at once
};

}  // namespace korch
