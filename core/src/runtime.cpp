// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "runtime_state.hpp"

#include "cycle/cycle.hpp"
#include "ranks/launcher_ranks.hpp"

#include <korch/backend/kokkos_compat.hpp>
#include <korch/device_residency.hpp>
#include <korch/error.hpp>
#include <korch/excerpt.hpp>
#include <korch/runtime.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>

namespace korch {

namespace {
std::atomic<bool> runtime_exists{false};
// The runtime whose cycle the calling thread is running (re-entry from the same thread).
thread_local const void* cycle_of_this_thread = nullptr;
}  // namespace

bool Runtime::exists() noexcept { return runtime_exists.load(); }

// ---------------------------------------------------------------------------------------------
// The state

Runtime::State::State(const MachineShare& machine_share, const RuntimeOptions& given)
    : machine(machine_share), options(sized_options(given, machine)) {
  bool expected = false;
  if (!runtime_exists.compare_exchange_strong(expected, true)) {
    throw Error("runtime: another korch::Runtime exists; there is one at a time: destroy the other one first");
  }
  try {
    teams.resize(options.n_teams);
    helpers.resize(options.n_helpers);
    validated = std::make_unique<detail::ValidationMemo>();
    pinned = std::make_unique<MemoryPool>("pinned host", PoolMemory::pinned_host, options.pinned_pool_limit);
    device = std::make_unique<MemoryPool>("device", PoolMemory::device, options.device_pool_limit);
  } catch (...) {
    runtime_exists.store(false);
    throw;
  }
}

Runtime::State::~State() { tear_down(); }

void Runtime::State::tear_down() noexcept {
  if (std::exchange(torn_down, true)) return;
  teams.clear();
  helpers.clear();
  pinned.reset();
  device.reset();
  runtime_exists.store(false);
}

RuntimeShape Runtime::State::shape() const noexcept {
  return RuntimeShape{options.n_teams, options.threads_per_team, options.n_helpers, options.helper_threads};
}

ThreadTeam& Runtime::State::started(std::vector<std::unique_ptr<ThreadTeam>>& slots, const char* kind, std::size_t i) {
  const bool helper = &slots == &helpers;
  const char* what = helper ? "helper team" : "team";
  if (i >= slots.size()) throw Error::format("runtime: {} {} does not exist: there are {}", what, i, slots.size());
  if (torn_down) throw Error::format("runtime: {} {} is gone: the runtime was destroyed", what, i);
  auto& slot = slots[i];
  if (!slot) {
    slot =
        std::make_unique<ThreadTeam>(fmt::format("{} {}", kind, i + 1),
                                     helper ? options.helper_threads : options.threads_per_team, options.team_options);
  }
  return *slot;
}

void Runtime::State::start_teams(std::size_t n_teams, std::size_t n_helpers) {
  std::lock_guard<std::mutex> lock(teams_mutex);
  for (std::size_t i = 0; i < n_teams && i < teams.size(); ++i) started(teams, "team", i);
  for (std::size_t i = 0; i < n_helpers && i < helpers.size(); ++i) started(helpers, "helper", i);
}

bool Runtime::State::owns_team_thread(const ThreadTeam* team) const noexcept {
  if (!team) return false;
  std::lock_guard<std::mutex> lock(teams_mutex);
  for (const auto& t : teams)
    if (t.get() == team) return true;
  for (const auto& t : helpers)
    if (t.get() == team) return true;
  return false;
}

bool Runtime::State::inside_own_cycle() const noexcept {
  return cycle_of_this_thread == this || owns_team_thread(ThreadTeam::current());
}

Runtime::State::Turn::Turn(std::shared_ptr<State> state, const char* call, const std::string& name)
    : state_(std::move(state)), lock_(state_->cycle_mutex) {
  if (state_->torn_down || state_->destroyed_in_cycle.load()) {
    throw Error::format(
        "runtime: {}('{}') waited for its turn on a runtime that was destroyed meanwhile: make the "
        "calls before destroying the runtime",
        call, excerpt(name));
  }
  cycle_of_this_thread = state_.get();
}
Runtime::State::Turn::~Turn() { cycle_of_this_thread = nullptr; }

Runtime::State::Turn Runtime::State::take_turn(const std::shared_ptr<State>& state, const char* call,
                                               const std::string& name) {
  if (const ThreadTeam* team = ThreadTeam::current(); state->owns_team_thread(team)) {
    throw Error::format(
        "runtime: {}('{}') called from a thread of team '{}' of this runtime (from an action "
        "routine?) while its cycle runs: that cycle waits for this thread, so the call could never "
        "start; run the next cycle from the caller after execute() returns",
        call, excerpt(name), team->name());
  }
  if (cycle_of_this_thread == state.get()) {
    throw Error::format(
        "runtime: {}('{}') called again on the thread that runs this runtime's cycle: "
        "cycles do not nest; call it after the running execute() returns",
        call, excerpt(name));
  }
  return Turn(state, call, name);
}

void Runtime::State::finish_if_destroyed(State& state, const char* call, const std::string& name,
                                         std::exception_ptr failure) {
  if (!state.destroyed_in_cycle.load()) {
    if (failure) std::rethrow_exception(failure);
    return;
  }
  state.tear_down();  // the cycle has ended: its teams may go
  std::string also;
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      also = fmt::format("; the cycle also failed: {}", e.what());
    } catch (...) {
      also = "; the cycle also failed with an exception of unknown type";
    }
  }
  throw Error::format(
      "runtime: destroyed during its own {}('{}'), from an action routine of that cycle: the cycle ran "
      "to its end, then the runtime was torn down; destroy a Runtime after {}() returns{}",
      call, excerpt(name), call, also);
}

// ---------------------------------------------------------------------------------------------
// The runtime

Runtime::Runtime(RuntimeOptions options) {
  const MachineShare machine = machine_share(options.ranks_on_node);
  state_ = std::make_shared<State>(machine, options);
}

Runtime::~Runtime() {
  if (!state_) return;
  if (state_->inside_own_cycle()) {
    // The cycle still runs on the teams: its caller holds the state and tears it down at its end.
    state_->destroyed_in_cycle.store(true);
    return;
  }
  std::lock_guard<std::mutex> turn(state_->cycle_mutex);  // a cycle on another thread ends first
  state_->tear_down();
}

RuntimeShape Runtime::shape() const noexcept { return state_->shape(); }
const RuntimeOptions& Runtime::options() const noexcept { return state_->options; }
const MachineShare& Runtime::machine() const noexcept { return state_->machine; }
MemoryPool& Runtime::pinned_pool() noexcept { return *state_->pinned; }
MemoryPool& Runtime::device_pool() noexcept { return *state_->device; }
void Runtime::set_trace(Trace* trace) noexcept { state_->trace = trace; }
void Runtime::set_recorder(Recorder* recorder) noexcept { state_->recorder = recorder; }
const std::vector<NodeReport>& Runtime::last_reports() const noexcept { return state_->reports; }
TransferBytes Runtime::last_transfers() const noexcept { return state_->transfers; }
const std::vector<std::pair<std::string, std::size_t>>& Runtime::last_distribution() const noexcept {
  return state_->distribution;
}

unsigned Runtime::started_threads() const {
  std::lock_guard<std::mutex> lock(state_->teams_mutex);
  unsigned n = 0;
  for (const auto& t : state_->teams) n += t ? t->n_max() : 0;
  for (const auto& t : state_->helpers) n += t ? t->n_max() : 0;
  return n;
}

ThreadTeam& Runtime::team(unsigned i) {
  std::lock_guard<std::mutex> lock(state_->teams_mutex);
  return state_->started(state_->teams, "team", i);
}
ThreadTeam& Runtime::helper_team(unsigned i) {
  std::lock_guard<std::mutex> lock(state_->teams_mutex);
  return state_->started(state_->helpers, "helper", i);
}

namespace {

// What makes a cycle impossible before it starts: Kokkos gone, or nothing to run on.
void check_cycle_can_run(const Configuration& c, const DataSource& source) {
  if (!compat::is_initialized())
    throw Error::format(
        "runtime: execute('{}') while Kokkos is not initialized (after Kokkos::finalize?): the teams "
        "launch their kernels on Kokkos; run every cycle between Kokkos::initialize and "
        "Kokkos::finalize, and destroy the Runtime before finalizing",
        excerpt(c.name));
  if (source.n_blocks() == 0)
    throw Error::format(
        "runtime: execute('{}') on the {}, which has no blocks: add the blocks before the cycle "
        "(BlockList::add), or skip the call where there is nothing to update",
        excerpt(c.name), source.source_name());
}

}  // namespace

void Runtime::State::run_cycle(State& state, const Bundle& bundle, const Configuration& c, DataSource& grid,
                               BlockIterator* order) {
  detail::CycleResult result;
  result.reports.swap(state.spare_reports);
  result.distribution.swap(state.spare_distribution);
  result.reports.clear();
  result.distribution.clear();
  // The reports and the distribution describe the last cycle, also when it failed; the ones they
  // replace keep their storage for the next cycle.
  struct Publish {
    State& state;
    detail::CycleResult& result;
    ~Publish() {
      state.reports.swap(result.reports);
      state.distribution.swap(result.distribution);
      state.spare_reports.swap(result.reports);
      state.spare_distribution.swap(result.distribution);
      state.transfers = result.transfers;
    }
  } publish{state, result};
  if (c.teams.size() > state.cycle_teams || c.helpers.size() > state.cycle_helpers) {
    state.start_teams(c.teams.size(), c.helpers.size());
    state.cycle_teams = std::max(state.cycle_teams, c.teams.size());
    state.cycle_helpers = std::max(state.cycle_helpers, c.helpers.size());
  }
  detail::Cycle cycle(
      detail::CycleResources{state.teams, state.helpers, *state.pinned, *state.device, state.items, *state.validated,
                             state.scratch, state.trace, state.recorder, state.shape()},
      bundle, c, grid, order);
  cycle.run(result);
}

void Runtime::execute(const Bundle& bundle, const Configuration& c, DataSource& grid, BlockIterator* order) {
  check_cycle_can_run(c, grid);
  const State::Turn turn = State::take_turn(state_, "execute", c.name);
  // Several ranks from a launcher, none of them known to korch: an error on the runtime's first
  // cycle. The launcher's environment does not change afterwards, and reading it costs each cycle.
  if (!turn.state().ranks_checked) {
    detail::check_ranks_told();
    turn.state().ranks_checked = true;
  }
  // From here on `this` may be destroyed by a routine of the cycle: only the turn's state is used.
  std::exception_ptr failure;
  try {
    State::run_cycle(turn.state(), bundle, c, grid, order);
  } catch (...) {
    failure = std::current_exception();
  }
  // A code's device arrays get back what the cycle's host actions changed, and host copies no one
  // used go back to the system (docs/residency.md).
  try {
    grid.release_host_copies();
    DeviceResidency* residency = grid.device_residency();
    if (residency && !residency->keeps_host_copies()) residency->release_unused_host_copies();
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  State::finish_if_destroyed(turn.state(), "execute", c.name, failure);
}

}  // namespace korch
