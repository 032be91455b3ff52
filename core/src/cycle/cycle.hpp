// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One execution cycle of Runtime::execute as named steps (docs/ARCHITECTURE.md):
//   validate -> wire -> start -> distribute -> drain -> unwire -> report
// A step's failure is collected and the cycle goes on winding down, so that every team ends
// Idle, every link is removed and every pool is balanced before the first error is rethrown.
#pragma once

#include "cycle_errors.hpp"
#include "cycle_node.hpp"
#include "cycle_scratch.hpp"
#include "cycle_wiring.hpp"
#include "validation_memo.hpp"

#include <korch/backend/memory_pool.hpp>
#include <korch/block_iterator.hpp>
#include <korch/bundle.hpp>
#include <korch/data_source.hpp>
#include <korch/distributor.hpp>
#include <korch/item_cache.hpp>
#include <korch/record_replay.hpp>
#include <korch/runtime.hpp>
#include <korch/trace.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace korch::detail {

// What a cycle borrows from its Runtime.
struct CycleResources {
  const std::vector<std::unique_ptr<ThreadTeam>>& teams;
  const std::vector<std::unique_ptr<ThreadTeam>>& helper_teams;
  MemoryPool& pinned;
  MemoryPool& device;
  ItemCache& items;
  ValidationMemo& validated;
  CycleScratch& scratch;
  Trace* trace;
  Recorder* recorder;
  RuntimeShape shape;
};

// What a finished cycle reports (also after a failure).
struct CycleResult {
  std::vector<NodeReport> reports;                                // in wait order
  std::vector<std::pair<std::string, std::size_t>> distribution;  // items per pipeline entry
  TransferBytes transfers;                                        // what the data movers copied
};

class Cycle {
 public:
  Cycle(CycleResources resources, const Bundle& bundle, const Configuration& configuration, DataSource& grid,
        BlockIterator* order);
  // Runs every step; fills `result` and then rethrows the cycle's first failure, if any.
  void run(CycleResult& result);

 private:
  void validate();
  void make_nodes();
  void start();
  Distributor& distributor();
  void distribute(CycleResult& result);
  void connect_routers();
  void close_entries(const std::vector<ThreadTeam*>& entries);
  void drain(CycleResult& result, const CycleWiring& wiring);
  void observe_throughput(const CycleResult& result);
  // The teams group g of the distributor pushes into, in the order of its pipelines.
  std::vector<const ThreadTeam*> group_entries(std::size_t g) const;
  void check_pools();
  void record_begin();
  // Publishers before subscribers (wait_order.hpp), kept by the validation memo.
  const std::vector<std::string>& wait_order() const noexcept { return r_.validated.wait_order(); }

  CycleResources r_;
  const Bundle& bundle_;
  const Configuration& c_;
  DataSource& grid_;
  BlockIterator* order_;
  CycleNodes& nodes_;  // the runtime's scratch (cycle_scratch.hpp)
  std::vector<std::unique_ptr<Helper>> helpers_;
  CycleErrors errors_;
  std::chrono::steady_clock::time_point distribution_started_{};
};

}  // namespace korch::detail
