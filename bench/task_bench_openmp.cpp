// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The OpenMP driver of korch-bench-task_bench (see task_bench_drivers.hpp): the whole graph as
// OpenMP tasks whose depend clauses name the task records.
#include "task_bench_drivers.hpp"

#include "bench_timing.hpp"

#include <omp.h>

namespace korch::bench {

namespace {

class OpenMPDriver final : public TaskBenchDriver {
 public:
  explicit OpenMPDriver(unsigned threads) : threads_(static_cast<int>(threads)) {}

  const char* name() const noexcept override { return "openmp"; }

  double run(TaskRunner& runner) override {
    const TaskGraph& g = runner.graph();
    const auto t0 = Clock::now();
#pragma omp parallel num_threads(threads_)
#pragma omp single
    {
      for (long t = 0; t < g.steps(); ++t) {
        for (long i = 0; i < g.width(); ++i) spawn(runner, t, i);
      }
    }  // the region's closing barrier waits for every task
    return seconds_since(t0);
  }

 private:
  // One task with depend(in:) on each dependency's record and depend(out:) on its own. The
  // clause lists are fixed at compile time, so each dependency count has its own directive. (GCC
  // does not count a variable named only in a depend clause as used: hence [[maybe_unused]].)
  static void spawn(TaskRunner& runner, long t, long i) {
    static_assert(Dependencies::max_dependencies == 3, "one directive per dependency count, up to three");
    const Dependencies d = runner.graph().dependencies(t, i);
    [[maybe_unused]] TaskRecord& out = runner.record(t, i);
    TaskRunner* r = &runner;
    switch (d.count) {
      case 0: {
#pragma omp task firstprivate(r, t, i) depend(out : out)
        r->execute(t, i);
        break;
      }
      case 1: {
        [[maybe_unused]] TaskRecord& a = runner.record(t - 1, d.point[0]);
#pragma omp task firstprivate(r, t, i) depend(in : a) depend(out : out)
        r->execute(t, i);
        break;
      }
      case 2: {
        [[maybe_unused]] TaskRecord& a = runner.record(t - 1, d.point[0]);
        [[maybe_unused]] TaskRecord& b = runner.record(t - 1, d.point[1]);
#pragma omp task firstprivate(r, t, i) depend(in : a, b) depend(out : out)
        r->execute(t, i);
        break;
      }
      default: {
        [[maybe_unused]] TaskRecord& a = runner.record(t - 1, d.point[0]);
        [[maybe_unused]] TaskRecord& b = runner.record(t - 1, d.point[1]);
        [[maybe_unused]] TaskRecord& c = runner.record(t - 1, d.point[2]);
#pragma omp task firstprivate(r, t, i) depend(in : a, b, c) depend(out : out)
        r->execute(t, i);
        break;
      }
    }
  }

  int threads_;
};

}  // namespace

std::unique_ptr<TaskBenchDriver> make_openmp_driver(TaskRunner&, unsigned threads) {
  return std::make_unique<OpenMPDriver>(threads);
}

}  // namespace korch::bench
