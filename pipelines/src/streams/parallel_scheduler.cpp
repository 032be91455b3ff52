// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parallel executor's scheduler: spawning tasks to scheduler threads, waking threads that
// sleep, and the end and the failure of a run. Each thread's trampoline is in parallel_trampoline.cpp.
#include "parallel_internals.hpp"

#include <algorithm>
#include <ctime>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

namespace korch::streams::detail {

namespace {

// The cores this process may run on: its affinity mask where there is one (an MPI rank bound to a
// few cores sees those), else the hardware's.
unsigned usable_cores() {
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
#endif
  return std::max(1U, std::thread::hardware_concurrency());
}

}  // namespace

Scheduler::Scheduler(const Layout& layout, const ParallelOptions& options)
    : layout_(layout), options_(options), cores_(usable_cores()) {
  for (unsigned i = 0; i < layout.threads(); ++i) threads_.push_back(std::make_unique<SchedulerThread>());
  busy_seconds.assign(layout.threads(), 0.0);
  spin_seconds.assign(layout.threads(), 0.0);
  // Threads that have not started yet count as awake: they will sweep their tasks.
  awake_threads_.store(layout.threads(), std::memory_order_relaxed);
}

void Scheduler::spawn(unsigned thread, std::unique_ptr<Task> task) {
  live_.fetch_add(1, std::memory_order_acq_rel);
  tasks_run_.fetch_add(1, std::memory_order_relaxed);
  SchedulerThread& target = *threads_[thread % threads_.size()];
  {
    std::lock_guard<std::mutex> g(target.mutex);
    target.inbox.push_back(std::move(task));
    target.has_inbox.store(true, std::memory_order_release);
    count_awake(target);
  }
  target.wake.notify_one();  // the thread had no tasks and sleeps
  wake_parked();             // the thread's tasks are blocked and it sleeps
}

void Scheduler::wake_empty_threads() {
  for (auto& thread : threads_) {
    {
      std::lock_guard<std::mutex> g(thread->mutex);  // the sleeper is waiting or will see the change
      count_awake(*thread);
    }
    thread->wake.notify_all();
  }
}

void Scheduler::count_awake(SchedulerThread& thread) {
  if (!thread.asleep) return;
  thread.asleep = false;
  awake_threads_.fetch_add(1, std::memory_order_relaxed);
}

bool Scheduler::run_over() const {
  return abort_.load(std::memory_order_acquire) ||
         (root_done_.load(std::memory_order_acquire) && live_.load(std::memory_order_acquire) == 0);
}

// The barrier pairs with the one in ThreadLoop::arm: either this thread sees the parked count, or
// the parking thread's last sweep sees the change.
void Scheduler::wake_parked() {
  store_load_barrier(parked_);
  if (parked_.load(std::memory_order_relaxed) == 0) return;
  {
    std::lock_guard<std::mutex> g(park_mutex_);
    ++park_epoch_;
    awake_threads_.fetch_add(asleep_parked_, std::memory_order_relaxed);
    asleep_parked_ = 0;
  }
  park_cv_.notify_all();
}

void Scheduler::fail(std::exception_ptr e) {
  {
    std::lock_guard<std::mutex> g(error_mutex_);
    if (!error_) error_ = e;
  }
  abort_.store(true, std::memory_order_release);
  wake_parked();
  wake_empty_threads();
}

void Scheduler::set_root_done() {
  root_done_.store(true, std::memory_order_release);
  wake_empty_threads();
}

std::uint64_t Scheduler::progress() const {
  std::uint64_t sum = 0;
  for (const auto& thread : threads_) sum += thread->progress.load(std::memory_order_relaxed);
  return sum;
}

// What the threads whose trampolines run have had: CPU time, time awake, and the distinct CPUs the
// awake ones were last seen on. A thread that leaves its trampoline meanwhile drops out of the sums;
// that window gets no verdict.
CoreShare::Usage Scheduler::usage(std::chrono::steady_clock::time_point now) const {
  CoreShare::Usage u;
#if defined(__linux__)
  const long long now_ns = std::chrono::nanoseconds(now.time_since_epoch()).count();
  std::vector<int> cpus;
  u.cpu_ns = 0;
  for (const auto& thread : threads_) {
    const long long started = thread->started_ns.load(std::memory_order_acquire);
    timespec t{};
    if (started == 0 || !thread->has_cpu_clock.load(std::memory_order_acquire) ||
        clock_gettime(thread->cpu_clock, &t) != 0) {
      continue;
    }
    u.cpu_ns += static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
    const long long since = thread->asleep_since_ns.load(std::memory_order_relaxed);
    u.awake_ns += now_ns - started - thread->asleep_ns.load(std::memory_order_relaxed) - (since ? now_ns - since : 0);
    const int cpu = thread->cpu.load(std::memory_order_relaxed);
    if (since == 0 && cpu >= 0) cpus.push_back(cpu);
  }
  std::sort(cpus.begin(), cpus.end());
  u.cores = std::min(static_cast<unsigned>(std::unique(cpus.begin(), cpus.end()) - cpus.begin()), cores_);
#else
  (void)now;  // no per-thread CPU clocks: never starved
#endif
  return u;
}

std::exception_ptr Scheduler::error() {
  std::lock_guard<std::mutex> g(error_mutex_);
  return error_;
}

}  // namespace korch::streams::detail
