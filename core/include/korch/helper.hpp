// A thread team helper (docs/data-packets.md): mover, unpacker, splitter, aggregator and the composites
// mover+unpacker, mover+unpacker+splitter, aggregator+mover. The Runtime runs each helper on a
// helper thread team of its own (so moves overlap computation); the helper's routine applies its
// steps to each item. Helpers whose output is their input item (mover, unpacker, mover_unpacker)
// hand it on through the helper team's work subscription; the others emit new items to `emit`.
#pragma once

#include <korch/action_routine.hpp>
#include <korch/aggregator.hpp>
#include <korch/configuration.hpp>
#include <korch/trace.hpp>

#include <functional>
#include <memory>
#include <optional>

namespace korch {

using Emit = std::function<void(std::shared_ptr<DataItem>)>;

class Helper {
 public:
  Helper(HelperConfig config, const Grid& grid, MemoryPool& pinned_pool, MemoryPool& device_pool);

  const HelperConfig& config() const noexcept { return config_; }
  const std::string& name() const noexcept { return config_.name; }
  static bool passes_item_through(HelperKind kind) noexcept {
    return kind == HelperKind::mover || kind == HelperKind::unpacker || kind == HelperKind::mover_unpacker;
  }

  // One item, on a helper-team thread (uses context.device_space() for transfers).
  void process(const ActionContext& context, DataItem& item, const Emit& emit, Trace* trace);
  // End of cycle (aggregators: the partial packet; moved to the device on `instance` for
  // aggregator_mover). Throws when an aggregator still holds incomplete blocks.
  void flush(const DeviceTaskSpace& instance, const Emit& emit);
  ActionRoutine routine(Emit emit, Trace* trace);

 private:
  void finish_aggregate(const DeviceTaskSpace& instance, std::shared_ptr<DataItem> item, const Emit& emit, Trace* trace,
                        unsigned thread);
  HelperConfig config_;
  std::optional<Aggregator> aggregator_;
};

}  // namespace korch
