// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What one task of korch-bench-task_bench does, and how the benchmark knows that a driver ran the
// graph right. Every driver calls TaskRunner::execute(t, i) once per task, in an order its runtime
// derives from the graph's dependencies.
//
// A task's output is a small record: the run that wrote it, its timestep and point, a checksum of
// the task and its inputs, and the kernel's result. A task reads the records of exactly its
// dependencies and checks each one (this run, timestep t-1, the expected point); a mismatch is
// counted as a failure. After each run, verify() checks every record against checksums computed
// once, sequentially: a task that ran twice, not at all or before its inputs were ready shows
// there. The run stamp means records need no reset between runs.
#pragma once

#include "task_graph.hpp"
#include "task_kernel.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace korch::bench {

// One task's output, alone on its cache line so that tasks on different threads never share one.
struct alignas(64) TaskRecord {
  std::uint64_t run = 0;  // 0: never written
  long timestep = -1;
  long point = -1;
  std::uint64_t checksum = 0;
  std::uint64_t result = 0;  // the kernel's result; keeps the kernel alive
};

// A 64-bit mix (the finalizer of splitmix64): consecutive keys give unrelated values.
inline std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The checksum of task (t, i) given its inputs' checksums in dependency order.
inline std::uint64_t task_checksum(const TaskGraph& g, long t, long i, const std::uint64_t* inputs, int n) {
  std::uint64_t h = mix64(static_cast<std::uint64_t>(g.index(t, i)));
  for (int k = 0; k < n; ++k) h = mix64(h ^ inputs[k]);
  return h;
}

class TaskRunner {
 public:
  explicit TaskRunner(const TaskGraph& graph)
      : graph_(graph), records_(static_cast<std::size_t>(graph.tasks())), expected_(records_.size()) {
    for (long t = 0; t < graph.steps(); ++t) {
      for (long i = 0; i < graph.width(); ++i) {
        const Dependencies d = graph.dependencies(t, i);
        std::uint64_t in[Dependencies::max_dependencies];
        for (int k = 0; k < d.count; ++k) in[k] = expected_[static_cast<std::size_t>(graph.index(t - 1, d.point[k]))];
        expected_[static_cast<std::size_t>(graph.index(t, i))] = task_checksum(graph, t, i, in, d.count);
      }
    }
  }

  const TaskGraph& graph() const noexcept { return graph_; }
  // The record of task (t, i): the drivers name it as the task's output (OpenMP's depend clauses).
  TaskRecord& record(long t, long i) noexcept { return records_[static_cast<std::size_t>(graph_.index(t, i))]; }

  // Before a run (on the driver's calling thread, before any task starts): the kernel size and a
  // fresh run stamp.
  void begin_run(long iterations) {
    iterations_ = iterations;
    ++run_;
  }
  long iterations() const noexcept { return iterations_; }

  // For the tests of the checks themselves: the task (steps/2, 0) stamps a wrong point on its output.
  void inject_fault(bool on) noexcept { fault_ = on; }

  // Runs task (t, i): reads and checks its inputs, runs the kernel, writes its record.
  void execute(long t, long i) {
    const Dependencies d = graph_.dependencies(t, i);
    std::uint64_t in[Dependencies::max_dependencies];
    for (int k = 0; k < d.count; ++k) {
      const TaskRecord& r = record(t - 1, d.point[k]);
      if (r.run != run_ || r.timestep != t - 1 || r.point != d.point[k]) fail_input(t, i, d.point[k], r);
      in[k] = r.checksum;
    }
    const std::uint64_t sum = task_checksum(graph_, t, i, in, d.count);
    const double seed = static_cast<double>(sum >> 11) * 0x1.0p-53;  // [0, 1)
    TaskRecord& out = record(t, i);
    out.result = compute_kernel(iterations_, seed);
    out.checksum = sum;
    out.timestep = t;
    out.point = fault_ && t == graph_.steps() / 2 && i == 0 ? graph_.width() : i;
    out.run = run_;
  }

  // After a run (every task finished): every record must hold this run's output with the expected
  // checksum. Throws std::runtime_error describing the first problem, a task's own check included.
  void verify(const std::string& what) {
    std::string first;
    long bad = 0;
    for (long t = 0; t < graph_.steps(); ++t) {
      for (long i = 0; i < graph_.width(); ++i) {
        const TaskRecord& r = record(t, i);
        const bool ok = r.run == run_ && r.timestep == t && r.point == i &&
                        r.checksum == expected_[static_cast<std::size_t>(graph_.index(t, i))];
        if (!ok && bad++ == 0)
          first = "task (t=" + std::to_string(t) + ", point " + std::to_string(i) + ") " +
                  (r.run != run_ ? "did not run" : "wrote a wrong output");
      }
    }
    const long input_failures = input_failures_.exchange(0);
    if (input_failures > 0 || bad > 0) {
      std::string message = what + ": ";
      if (input_failures > 0) {
        std::lock_guard<std::mutex> lock(mutex_);
        message += std::to_string(input_failures) + " task input(s) failed their check, the first: " + first_input_;
        first_input_.clear();
        if (bad > 0) message += "; ";
      }
      if (bad > 0) message += std::to_string(bad) + " output(s) wrong after the run, the first: " + first;
      throw std::runtime_error(message);
    }
  }

 private:
  void fail_input(long t, long i, long dep, const TaskRecord& r) {
    if (input_failures_.fetch_add(1) != 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    first_input_ = "task (t=" + std::to_string(t) + ", point " + std::to_string(i) +
                   ") expected the output of (t=" + std::to_string(t - 1) + ", point " + std::to_string(dep) +
                   ") and found " +
                   (r.run != run_ ? std::string("none of this run")
                                  : "(t=" + std::to_string(r.timestep) + ", point " + std::to_string(r.point) + ")");
  }

  const TaskGraph& graph_;
  std::vector<TaskRecord> records_;
  std::vector<std::uint64_t> expected_;
  long iterations_ = 1;
  std::uint64_t run_ = 0;
  bool fault_ = false;
  std::atomic<long> input_failures_{0};
  std::mutex mutex_;
  std::string first_input_;
};

}  // namespace korch::bench
