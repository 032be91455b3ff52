// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The korch driver of korch-bench-task_bench (see task_bench_drivers.hpp): one ThreadTeam cycle
// per timestep.
#include "task_bench_drivers.hpp"

#include "bench_timing.hpp"

#include <korch/thread_team.hpp>

#include <algorithm>

namespace korch::bench {

namespace {

// One point of the graph; the timestep comes with the cycle's parameters.
struct PointItem : DataItem {
  explicit PointItem(long p) : point(p) {}
  long point;
};

class KorchDriver final : public TaskBenchDriver {
 public:
  // caller_joins: the caller of wait() works as one of the cycle's threads (TeamOptions::waiter_joins),
  // so `threads` OS threads run tasks, as in the OpenMP driver; otherwise `threads` team threads run
  // them while the caller feeds and waits.
  KorchDriver(TaskRunner& runner, unsigned threads, bool caller_joins)
      : team_("task_bench", threads, options(caller_joins)),
        active_(static_cast<unsigned>(std::min<long>(threads, runner.graph().width())) - (caller_joins ? 1U : 0U)),
        caller_joins_(caller_joins),
        routine_("task", [&runner](const ActionContext& ctx, DataItem& item) {
          runner.execute(ctx.parameters_as<long>(), static_cast<PointItem&>(item).point);
        }) {
    for (long i = 0; i < runner.graph().width(); ++i) points_.push_back(std::make_shared<PointItem>(i));
  }

  const char* name() const noexcept override { return caller_joins_ ? "korch" : "korch_pool"; }

  double run(TaskRunner& runner) override {
    const long steps = runner.graph().steps();
    const auto t0 = Clock::now();
    for (long t = 0; t < steps; ++t) {
      team_.start_cycle(routine_, active_, ActionParameters(t));
      team_.enqueue(std::vector<std::shared_ptr<DataItem>>(points_));
      team_.close_queue();
      team_.wait();
    }
    return seconds_since(t0);
  }

 private:
  static TeamOptions options(bool caller_joins) {
    TeamOptions o;
    o.waiter_joins = caller_joins;
    return o;
  }

  ThreadTeam team_;
  unsigned active_;  // threads activated per cycle: no more than the timestep has points
  bool caller_joins_;
  ActionRoutine routine_;
  std::vector<std::shared_ptr<DataItem>> points_;
};

}  // namespace

std::unique_ptr<TaskBenchDriver> make_korch_driver(TaskRunner& runner, unsigned threads, bool caller_joins) {
  return std::make_unique<KorchDriver>(runner, threads, caller_joins);
}

}  // namespace korch::bench
