// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The orchestration runtime: N thread teams of M threads each and a few helper teams, plus the
// memory pools for data packets. A team starts its threads when a cycle first uses it and keeps
// them for the runtime's life. Counts left 0 are sized to the cores this process may use, divided
// among the ranks on its node (runtime_sizing.hpp, docs/runtime-sizing.md).
//
//   korch::RuntimeOptions options;   // counts left 0 are sized to the machine
//   options.n_teams = 6;
//   options.threads_per_team = 4;
//   korch::Runtime runtime(options);
//   runtime.execute(bundle, korch::configurations::get("cpu_gpu_data_parallel"), grid);
//
// execute() runs one execution cycle: the thin scheduler validates the configuration against the
// bundle and the runtime's shape (errors name the team, helper or edge), links the teams, helpers
// and distributor as the configuration says, starts every team, distributes the grid's blocks on the
// calling thread, and blocks until every team and helper is Idle again. Errors from routines,
// helpers or the distributor reach the caller as one korch::Error (the first one, with a count of
// the others) after the cycle has been wound down; nothing is left running and the pools balance
// (outstanding bytes zero after every cycle, or execute() throws).
//
// One Runtime at a time: constructing a second one while the first exists throws.
//
// Destroying a Runtime from inside its own cycle (an action routine, on a team thread or on the
// caller of execute() that runs one in wait()) is deferred: the destructor returns at once, the
// cycle runs to its end on the runtime's teams, which live on, then the runtime is torn down and
// the cycle's execute() (or run_auxiliary()) throws a korch::Error saying so. The routine must not
// use the runtime after deleting it; until the cycle's caller has torn it down, a new Runtime cannot
// be made (docs/runtime-lifetime.md). Destroyed from any other thread, it waits for a running cycle.
#pragma once

#include <korch/auxiliary_cycle.hpp>
#include <korch/backend/memory_pool.hpp>
#include <korch/block_iterator.hpp>
#include <korch/bundle.hpp>
#include <korch/configuration.hpp>
#include <korch/data_source.hpp>
#include <korch/grid.hpp>
#include <korch/item_cache.hpp>
#include <korch/record_replay.hpp>
#include <korch/runtime_sizing.hpp>
#include <korch/thread_team.hpp>
#include <korch/trace.hpp>
#include <korch/transfer_bytes.hpp>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace korch {

namespace detail {
class ValidationMemo;
}

// A count left 0 is sized to the machine (sized_options in runtime_sizing.hpp); one given wins.
struct RuntimeOptions {
  unsigned n_teams = 0;           // N
  unsigned threads_per_team = 0;  // M
  unsigned n_helpers = 0;         // helper teams (movers, unpackers, splitters, aggregators)
  unsigned helper_threads = 0;    // threads per helper team
  // Options of every team. While the caller of execute() waits for a team, it runs queued items of
  // the cycle in place of a team thread that sleeps (TeamOptions::waiter_works): a cycle of small
  // items then needs no hand-off between cores, which costs more than the items themselves.
  TeamOptions team_options{};
  // The most bytes the data-packet pools may take from pinned host and device memory (0: no limit).
  // Past the limit an acquisition fails the cycle with an error naming the pool (see MemoryPool).
  std::size_t pinned_pool_limit = 0;
  std::size_t device_pool_limit = 0;
  // Ranks of this job on this node, among which the cores are divided (0: the launcher's
  // environment says, else 1; count_ranks_on_node() asks MPI, collectively).
  unsigned ranks_on_node = 0;
};

struct NodeReport {
  std::string node;  // team or helper name
  CycleReport cycle;
};

class Runtime {
 public:
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // True while a Runtime exists.
  static bool exists() noexcept;

  // Runs one cycle and returns when every item is processed (rethrows the first failure as a
  // korch::Error). Calls from several threads take turns: a second caller waits until the running
  // cycle ends (teams, pools and reports belong to one cycle at a time). A call from inside a
  // cycle of this runtime — from an action routine on one of its team threads, or re-entering on
  // the calling thread — could never proceed and throws a korch::Error at once.
  // `source` holds the blocks: a korch::Grid, a physics code's BlockList or another DataSource.
  // `order`, when given, hands the distributor the source's blocks (block_iterator.hpp), e.g. as
  // their guard cells become valid (GuardCellIterator) or the leaves only (block_iterators.hpp);
  // otherwise every block goes, in id order.
  void execute(const Bundle& bundle, const Configuration& configuration, DataSource& source,
               BlockIterator* order = nullptr);

  // Runs `routine` once, with no items, on one thread of pipeline team `where.team`, then fences
  // the chosen instance (auxiliary_cycle.hpp). Takes its turn with execute() and refuses the same
  // re-entry; a throwing routine reaches the caller as a korch::Error naming it and the team. The
  // last cycle's reports and distribution stay those of the last execute().
  void run_auxiliary(const AuxiliaryRoutine& routine, AuxiliaryPlacement where = {}, ActionParameters parameters = {});

  RuntimeShape shape() const noexcept;
  // The counts in use: the given ones, and the sized ones where 0 was given.
  const RuntimeOptions& options() const noexcept;
  // The machine share the counts were sized to.
  const MachineShare& machine() const noexcept;
  // Team i (helper team i), started now if no cycle has used it yet.
  ThreadTeam& team(unsigned i);
  ThreadTeam& helper_team(unsigned i);
  // Threads started so far by the teams and helper teams (they start when first used).
  unsigned started_threads() const;
  MemoryPool& pinned_pool() noexcept;
  MemoryPool& device_pool() noexcept;

  // Attach (or detach with nullptr) a trace / recorder for the following cycles. Not during execute.
  void set_trace(Trace* trace) noexcept;
  void set_recorder(Recorder* recorder) noexcept;

  // Each node's report of the last execute(), in the order the nodes were waited for
  // (publishers before subscribers).
  const std::vector<NodeReport>& last_reports() const noexcept;
  // Items the distributor pushed into each pipeline entry during the last execute().
  const std::vector<std::pair<std::string, std::size_t>>& last_distribution() const noexcept;
  // Bytes the data movers of the last execute() copied between host and device, by direction.
  //   std::uint64_t staged = rt.last_transfers().host_to_device;
  TransferBytes last_transfers() const noexcept;

 private:
  struct State;  // everything the runtime owns, shared with its running cycle (see ~Runtime)
  std::shared_ptr<State> state_;
};

}  // namespace korch
