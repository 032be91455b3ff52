// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a korch::Runtime owns, behind its handle: shared with the cycle in progress, which keeps it
// alive to the cycle's end even when a routine of that cycle destroys the Runtime (runtime.hpp,
// docs/runtime-lifetime.md).
#pragma once

#include "cycle/cycle_scratch.hpp"
#include "cycle/validation_memo.hpp"

#include <korch/runtime.hpp>

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace korch {

struct Runtime::State {
  State(const MachineShare& machine, const RuntimeOptions& options);
  ~State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  MachineShare machine;
  RuntimeOptions options;
  // n_teams and n_helpers slots, each empty until its team is first used; made under teams_mutex.
  std::vector<std::unique_ptr<ThreadTeam>> teams;
  std::vector<std::unique_ptr<ThreadTeam>> helpers;
  mutable std::mutex teams_mutex;
  std::unique_ptr<MemoryPool> pinned;
  std::unique_ptr<MemoryPool> device;
  Trace* trace = nullptr;
  Recorder* recorder = nullptr;
  std::vector<NodeReport> reports;
  std::vector<std::pair<std::string, std::size_t>> distribution;
  // The storage of the cycle before the last one's reports and distribution, for the next cycle to
  // fill: a cycle then allocates neither.
  std::vector<NodeReport> spare_reports;
  std::vector<std::pair<std::string, std::size_t>> spare_distribution;
  TransferBytes transfers;
  ItemCache items;                                    // the grid's tiles and blocks, reused from cycle to cycle
  std::unique_ptr<detail::ValidationMemo> validated;  // the configuration and bundle validated last
  detail::CycleScratch scratch;                       // what each cycle fills and empties again
  std::mutex cycle_mutex;                             // one execute() at a time
  bool ranks_checked = false;                         // the launcher's ranks were checked on this runtime's first cycle
  // How many teams and helper teams the cycles have made sure of (under cycle_mutex): a slot, once
  // made, stays until tear_down, so a cycle needing no more skips teams_mutex.
  std::size_t cycle_teams = 0, cycle_helpers = 0;
  // The Runtime was destroyed from inside the running cycle; its caller tears the state down.
  std::atomic<bool> destroyed_in_cycle{false};
  bool torn_down = false;  // under cycle_mutex, or by the last owner

  RuntimeShape shape() const noexcept;
  // Team i of `slots`, made now if it is empty.
  ThreadTeam& started(std::vector<std::unique_ptr<ThreadTeam>>& slots, const char* kind, std::size_t i);
  void start_teams(std::size_t n_teams, std::size_t n_helpers);
  bool owns_team_thread(const ThreadTeam* team) const noexcept;
  // Whether the calling thread is running this runtime's cycle (a routine, or the caller of execute).
  bool inside_own_cycle() const noexcept;
  // Ends the teams, frees the pools and lets a new Runtime be made; once.
  void tear_down() noexcept;
  // One cycle (the turn taken). Touches nothing of the Runtime object: a routine may destroy it.
  static void run_cycle(State& state, const Bundle& bundle, const Configuration& configuration, DataSource& source,
                        BlockIterator* order);

  // This runtime's one cycle in progress, held while a Turn lives (with the state it keeps alive).
  class Turn {
   public:
    // Waits for the turn; refuses a runtime destroyed while the caller waited.
    Turn(std::shared_ptr<State> state, const char* call, const std::string& name);
    Turn(const Turn&) = delete;
    Turn& operator=(const Turn&) = delete;
    ~Turn();
    State& state() const noexcept { return *state_; }

   private:
    std::shared_ptr<State> state_;
    std::lock_guard<std::mutex> lock_;
  };
  // Refuses calls from the runtime's own team threads and nested calls (naming `call` and `name`),
  // then waits its turn.
  static Turn take_turn(const std::shared_ptr<State>& state, const char* call, const std::string& name);
  // After a cycle or auxiliary call that ran on `state`: when a routine destroyed the Runtime, tears
  // the state down and throws, naming `call` and `name` (and the cycle's own failure, if any).
  static void finish_if_destroyed(State& state, const char* call, const std::string& name, std::exception_ptr failure);
};

}  // namespace korch
