#include "cycle/cycle.hpp"
#include "cycle/validation_memo.hpp"
#include "ranks/launcher_ranks.hpp"

#include <korch/backend/kokkos_compat.hpp>
#include <korch/error.hpp>
#include <korch/runtime.hpp>

#include <fmt/format.h>

#include <atomic>

namespace korch {

namespace {
std::atomic<bool> runtime_exists{false};
}

bool Runtime::exists() noexcept { return runtime_exists.load(); }

Runtime::Runtime(RuntimeOptions options)
    : machine_(machine_share(options.ranks_on_node)), options_(sized_options(options, machine_)) {
  bool expected = false;
  if (!runtime_exists.compare_exchange_strong(expected, true)) {
    throw Error("runtime: another korch::Runtime exists; there is one at a time: destroy the other one first");
  }
  try {
    teams_.resize(options_.n_teams);
    helpers_.resize(options_.n_helpers);
    validated_ = std::make_unique<detail::ValidationMemo>();
    pinned_ = std::make_unique<MemoryPool>("pinned host", PoolMemory::pinned_host, options_.pinned_pool_limit);
    device_ = std::make_unique<MemoryPool>("device", PoolMemory::device, options_.device_pool_limit);
  } catch (...) {
    runtime_exists.store(false);
    throw;
  }
}

ThreadTeam& Runtime::started(std::unique_ptr<ThreadTeam>& slot, const char* kind, std::size_t i, unsigned threads) {
  if (!slot) slot = std::make_unique<ThreadTeam>(fmt::format("{} {}", kind, i + 1), threads, options_.team_options);
  return *slot;
}

void Runtime::start_teams(std::size_t n_teams, std::size_t n_helpers) {
  std::lock_guard<std::mutex> lock(teams_mutex_);
  for (std::size_t i = 0; i < n_teams && i < teams_.size(); ++i) started(teams_[i], "team", i, options_.threads_per_team);
  for (std::size_t i = 0; i < n_helpers && i < helpers_.size(); ++i) {
    started(helpers_[i], "helper", i, options_.helper_threads);
  }
}

unsigned Runtime::started_threads() const {
  std::lock_guard<std::mutex> lock(teams_mutex_);
  unsigned n = 0;
  for (const auto& t : teams_) n += t ? t->n_max() : 0;
  for (const auto& t : helpers_) n += t ? t->n_max() : 0;
  return n;
}

Runtime::~Runtime() {
  teams_.clear();
  helpers_.clear();
  pinned_.reset();
  device_.reset();
  runtime_exists.store(false);
}

RuntimeShape Runtime::shape() const noexcept {
  return RuntimeShape{options_.n_teams, options_.threads_per_team, options_.n_helpers, options_.helper_threads};
}

ThreadTeam& Runtime::team(unsigned i) {
  if (i >= teams_.size()) throw Error::format("runtime: team {} does not exist: there are {}", i, teams_.size());
  std::lock_guard<std::mutex> lock(teams_mutex_);
  return started(teams_[i], "team", i, options_.threads_per_team);
}
ThreadTeam& Runtime::helper_team(unsigned i) {
  if (i >= helpers_.size()) throw Error::format("runtime: helper team {} does not exist: there are {}", i, helpers_.size());
  std::lock_guard<std::mutex> lock(teams_mutex_);
  return started(helpers_[i], "helper", i, options_.helper_threads);
}


namespace {
// The runtime whose cycle the calling thread is running (re-entry from the same thread).
thread_local const Runtime* cycle_of_this_thread = nullptr;
}  // namespace

bool Runtime::owns_team_thread(const ThreadTeam* team) const noexcept {
  if (!team) return false;
  std::lock_guard<std::mutex> lock(teams_mutex_);
  for (const auto& t : teams_)
    if (t.get() == team) return true;
  for (const auto& t : helpers_)
    if (t.get() == team) return true;
  return false;
}

namespace {

// What makes a cycle impossible before it starts: Kokkos gone, or nothing to run on.
void check_cycle_can_run(const Configuration& c, const DataSource& source) {
  if (!compat::is_initialized())
    throw Error::format("runtime: execute('{}') while Kokkos is not initialized (after Kokkos::finalize?): the teams "
                        "launch their kernels on Kokkos; run every cycle between Kokkos::initialize and "
                        "Kokkos::finalize, and destroy the Runtime before finalizing",
                        c.name);
  if (source.n_blocks() == 0)
    throw Error::format("runtime: execute('{}') on the {}, which has no blocks: add the blocks before the cycle "
                        "(BlockList::add), or skip the call where there is nothing to update",
                        c.name, source.source_name());
}

}  // namespace

void Runtime::execute(const Bundle& bundle, const Configuration& c, DataSource& grid, BlockIterator* order) {
  check_cycle_can_run(c, grid);
  const Turn turn = take_turn("execute", c.name);
  // Several ranks from a launcher, none of them known to korch: an error on the runtime's first
  // cycle. The launcher's environment does not change afterwards, and reading it costs each cycle.
  if (!ranks_checked_) {
    detail::check_ranks_told();
    ranks_checked_ = true;
  }
  execute_cycle(bundle, c, grid, order);
}

Runtime::Turn::Turn(std::mutex& mutex, const Runtime* runtime) : lock_(mutex) { cycle_of_this_thread = runtime; }
Runtime::Turn::~Turn() { cycle_of_this_thread = nullptr; }

Runtime::Turn Runtime::take_turn(const char* call, const std::string& name) {
  if (const ThreadTeam* team = ThreadTeam::current(); owns_team_thread(team)) {
    throw Error::format("runtime: {}('{}') called from a thread of team '{}' of this runtime (from an action "
                        "routine?) while its cycle runs: that cycle waits for this thread, so the call could never "
                        "start; run the next cycle from the caller after execute() returns", call, name, team->name());
  }
  if (cycle_of_this_thread == this) {
    throw Error::format("runtime: {}('{}') called again on the thread that runs this runtime's cycle: "
                        "cycles do not nest; call it after the running execute() returns", call, name);
  }
  return Turn(cycle_mutex_, this);
}

void Runtime::execute_cycle(const Bundle& bundle, const Configuration& c, DataSource& grid, BlockIterator* order) {
  detail::CycleResult result;
  // The reports and the distribution describe the last cycle, also when it failed.
  struct Publish {
    Runtime& rt;
    detail::CycleResult& result;
    ~Publish() {
      rt.reports_ = std::move(result.reports);
      rt.distribution_ = std::move(result.distribution);
    }
  } publish{*this, result};
  start_teams(c.teams.size(), c.helpers.size());
  detail::Cycle cycle(
      detail::CycleResources{teams_, helpers_, *pinned_, *device_, items_, *validated_, trace_, recorder_, shape()},
      bundle, c, grid, order);
  cycle.run(result);
}

}  // namespace korch
