// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The oneTBB driver of korch-bench-task_bench (see task_bench_drivers.hpp): the whole graph as a
// flow graph of continue_nodes, built once and run as often as asked.
#include "task_bench_drivers.hpp"

#include "bench_timing.hpp"

#include <tbb/flow_graph.h>
#include <tbb/global_control.h>
#include <tbb/task_arena.h>

namespace korch::bench {

namespace {

using tbb::flow::continue_msg;
using TaskNode = tbb::flow::continue_node<continue_msg>;

class TBBDriver final : public TaskBenchDriver {
 public:
  TBBDriver(TaskRunner& runner, unsigned threads)
      : control_(tbb::global_control::max_allowed_parallelism, threads), arena_(static_cast<int>(threads)) {
    // The graph is made inside the arena, so that its tasks run there.
    arena_.execute([&] {
      const TaskGraph& g = runner.graph();
      graph_ = std::make_unique<tbb::flow::graph>();
      start_ = std::make_unique<tbb::flow::broadcast_node<continue_msg>>(*graph_);
      nodes_.reserve(static_cast<std::size_t>(g.tasks()));
      TaskRunner* r = &runner;
      for (long t = 0; t < g.steps(); ++t) {
        for (long i = 0; i < g.width(); ++i) {
          nodes_.push_back(std::make_unique<TaskNode>(*graph_, [r, t, i](const continue_msg&) {
            r->execute(t, i);
            return continue_msg();
          }));
          const Dependencies d = g.dependencies(t, i);
          if (d.count == 0) tbb::flow::make_edge(*start_, *nodes_.back());
          for (int k = 0; k < d.count; ++k)
            tbb::flow::make_edge(*nodes_[static_cast<std::size_t>(g.index(t - 1, d.point[k]))], *nodes_.back());
        }
      }
    });
  }

  ~TBBDriver() override {
    arena_.execute([&] {
      graph_->wait_for_all();
      nodes_.clear();
      start_.reset();
      graph_.reset();
    });
  }

  const char* name() const noexcept override { return "tbb"; }

  double run(TaskRunner&) override {
    const auto t0 = Clock::now();
    arena_.execute([&] {
      start_->try_put(continue_msg());
      graph_->wait_for_all();
    });
    return seconds_since(t0);
  }

 private:
  tbb::global_control control_;
  tbb::task_arena arena_;
  std::unique_ptr<tbb::flow::graph> graph_;
  std::unique_ptr<tbb::flow::broadcast_node<continue_msg>> start_;
  std::vector<std::unique_ptr<TaskNode>> nodes_;  // timestep-major, as TaskGraph::index
};

}  // namespace

std::unique_ptr<TaskBenchDriver> make_tbb_driver(TaskRunner& runner, unsigned threads) {
  return std::make_unique<TBBDriver>(runner, threads);
}

}  // namespace korch::bench
