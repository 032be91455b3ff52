// The orchestration runtime: N thread teams of M threads each and a few helper teams, plus the
// memory pools for data packets. A team starts its threads when a cycle first uses it and keeps
// them for the runtime's life. Counts left 0 are sized to the cores this process may use, divided
// among the ranks on its node (runtime_sizing.hpp, docs/runtime-sizing.md).
//
//   korch::Runtime runtime({.n_teams = 6, .threads_per_team = 4});
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
  void execute(const Bundle& bundle, const Configuration& configuration, DataSource& source, BlockIterator* order = nullptr);

  // Runs `routine` once, with no items, on one thread of pipeline team `where.team`, then fences
  // the chosen instance (auxiliary_cycle.hpp). Takes its turn with execute() and refuses the same
  // re-entry; a throwing routine reaches the caller as a korch::Error naming it and the team. The
  // last cycle's reports and distribution stay those of the last execute().
  void run_auxiliary(const AuxiliaryRoutine& routine, AuxiliaryPlacement where = {}, ActionParameters parameters = {});

  RuntimeShape shape() const noexcept;
  // The counts in use: the given ones, and the sized ones where 0 was given.
  const RuntimeOptions& options() const noexcept { return options_; }
  // The machine share the counts were sized to.
  const MachineShare& machine() const noexcept { return machine_; }
  // Team i (helper team i), started now if no cycle has used it yet.
  ThreadTeam& team(unsigned i);
  ThreadTeam& helper_team(unsigned i);
  // Threads started so far by the teams and helper teams (they start when first used).
  unsigned started_threads() const;
  MemoryPool& pinned_pool() noexcept { return *pinned_; }
  MemoryPool& device_pool() noexcept { return *device_; }

  // Attach (or detach with nullptr) a trace / recorder for the following cycles. Not during execute.
  void set_trace(Trace* trace) noexcept { trace_ = trace; }
  void set_recorder(Recorder* recorder) noexcept { recorder_ = recorder; }

  // Each node's report of the last execute(), in the order the nodes were waited for
  // (publishers before subscribers).
  const std::vector<NodeReport>& last_reports() const noexcept { return reports_; }
  // Items the distributor pushed into each pipeline entry during the last execute().
  const std::vector<std::pair<std::string, std::size_t>>& last_distribution() const noexcept { return distribution_; }

 private:
  MachineShare machine_;
  RuntimeOptions options_;
  // n_teams and n_helpers slots, each empty until its team is first used; made under teams_mutex_.
  std::vector<std::unique_ptr<ThreadTeam>> teams_;
  std::vector<std::unique_ptr<ThreadTeam>> helpers_;
  mutable std::mutex teams_mutex_;
  std::unique_ptr<MemoryPool> pinned_;
  std::unique_ptr<MemoryPool> device_;
  Trace* trace_ = nullptr;
  Recorder* recorder_ = nullptr;
  std::vector<NodeReport> reports_;
  std::vector<std::pair<std::string, std::size_t>> distribution_;
  ItemCache items_;  // the grid's tiles and blocks, reused from cycle to cycle
  std::unique_ptr<detail::ValidationMemo> validated_;  // the configuration and bundle validated last
  std::mutex cycle_mutex_;  // one execute() at a time
  bool ranks_checked_ = false;  // the launcher's ranks were checked on this runtime's first cycle
  // This runtime's one cycle in progress, held while a Turn lives: take_turn refuses calls from the
  // runtime's own team threads and nested calls (naming `call` and `name`), then waits its turn.
  class Turn {
   public:
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;
    ~Turn();

   private:
    friend class Runtime;
    Turn(std::mutex& mutex, const Runtime* runtime);
    std::lock_guard<std::mutex> lock_;
  };
  Turn take_turn(const char* call, const std::string& name);
  void execute_cycle(const Bundle& bundle, const Configuration& configuration, DataSource& source, BlockIterator* order);
  bool owns_team_thread(const ThreadTeam* team) const noexcept;
  // Starts the first `n_teams` teams and `n_helpers` helper teams that are not running yet.
  void start_teams(std::size_t n_teams, std::size_t n_helpers);
  // The team in `slot`, made now if it is empty; under teams_mutex_.
  ThreadTeam& started(std::unique_ptr<ThreadTeam>& slot, const char* kind, std::size_t i, unsigned threads);
};

}  // namespace korch
