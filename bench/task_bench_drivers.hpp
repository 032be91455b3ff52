// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The drivers of korch-bench-task_bench: each runs a whole task graph through one runtime, calling
// TaskRunner::execute(t, i) once per task after the tasks it depends on. A driver is made once per
// graph (threads started, graph built) and then run many times; only run() is timed.
//
//  korch   korch::ThreadTeam of `threads` threads; one execution cycle per timestep (start_cycle
//          with the timestep as the cycle's parameter, the timestep's points enqueued as items in
//          one call, close_queue, wait). The cycle boundary is the only synchronisation, so it also
//          orders every pattern's dependencies. `threads`-1 team threads are activated and the
//          calling thread joins them in wait() (TeamOptions::waiter_joins): `threads` OS threads
//          run tasks, as in the OpenMP driver.
//  korch_pool  the same with all `threads` team threads activated and default TeamOptions: the
//          calling thread feeds and waits (it stands in only for a sleeping team thread), so
//          `threads`+1 threads share the cores.
//  openmp  one parallel region of `threads` threads; one of them creates every task of the graph
//          with depend(in:) on the records of its dependencies and depend(out:) on its own record,
//          then joins the others in running tasks at the region's closing barrier.
//  tbb     a oneTBB flow graph with one continue_node per task, an edge from each dependency, and
//          a broadcast_node that starts the tasks without dependencies; run in a task_arena of
//          `threads` slots (the calling thread takes one), with max_allowed_parallelism raised to
//          `threads` while the driver lives.
#pragma once

#include "task_execution.hpp"

#include <memory>
#include <string>
#include <vector>

namespace korch::bench {

class TaskBenchDriver {
 public:
  virtual ~TaskBenchDriver() = default;
  virtual const char* name() const noexcept = 0;
  // Runs every task of the runner's graph once (after runner.begin_run); returns the wall time
  // in seconds from the first task handed to the runtime until the last one finished.
  virtual double run(TaskRunner& runner) = 0;
};

// The drivers this build has, in the order they run in: korch, korch_pool, then openmp and tbb when built in.
std::vector<std::string> available_drivers();

// Makes the named driver for runner's graph; throws std::invalid_argument for a name this build lacks.
std::unique_ptr<TaskBenchDriver> make_driver(const std::string& name, TaskRunner& runner, unsigned threads);

std::unique_ptr<TaskBenchDriver> make_korch_driver(TaskRunner& runner, unsigned threads, bool caller_joins);
#if defined(KORCH_BENCH_HAVE_OPENMP)
std::unique_ptr<TaskBenchDriver> make_openmp_driver(TaskRunner& runner, unsigned threads);
#endif
#if defined(KORCH_BENCH_HAVE_TBB)
std::unique_ptr<TaskBenchDriver> make_tbb_driver(TaskRunner& runner, unsigned threads);
#endif

}  // namespace korch::bench
