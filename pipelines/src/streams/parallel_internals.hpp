// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parallel executor's private types, shared by its sources: channels between stages
// (parallel_channels.cpp), the scheduler (parallel_scheduler.cpp) and its threads' trampolines
// (parallel_trampoline.cpp, with spin_budget.hpp and core_share.hpp), and the tasks that
// activating a layout unit makes (parallel_tasks.cpp). run_parallel is in parallel.cpp.
#pragma once

#include <korch/streams/commit_queue.hpp>
#include <korch/streams/parallel.hpp>
#include <korch/streams/spsc_ring.hpp>

#include "core_share.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <ctime>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace korch::streams::detail {

// How a unit's activation ended: a computer finished with a value, the input ran dry (starved), or
// the consumer downstream finished first (stopped).
struct Outcome {
  enum Kind { Finished, Starved, Stopped } kind = Starved;
  Value value = 0;
};
using Callback = std::function<void(Outcome)>;

#if defined(__SANITIZE_THREAD__)
#define KORCH_STREAMS_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KORCH_STREAMS_TSAN 1
#endif
#endif

// Orders this thread's earlier stores before its later loads against another thread doing the same
// on `word` (the parking handshake: a parker counts itself in `word`, then rechecks its queues; a
// producer writes a queue, then reads `word`). ThreadSanitizer does not model fences (GCC refuses
// them under -fsanitize=thread); there a read-modify-write of `word` gives the same guarantee.
inline void store_load_barrier(std::atomic<unsigned>& word) {
#ifdef KORCH_STREAMS_TSAN
  word.fetch_add(0, std::memory_order_acq_rel);
#else
  (void)word;
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// ---------------------------------------------------------------------------------------------
// Channels (parallel_channels.cpp)

// Whether the input of `unit` must be a commit queue: its consumer changes over time.
bool needs_commit(const Unit& unit);
std::string channel_name(const Unit& from, const Unit& to);
std::size_t commit_capacity(const ParallelOptions& options);

// The queue between two stages: an SPSC ring, a commit queue, or the program's output (a sink).
class Channel {
 public:
  enum Kind { Spsc, Commit, Sink };
  Channel(std::string name, Kind kind, std::size_t capacity, std::vector<Item>* sink = nullptr);
  bool push(Item x);
  bool pop(Item& x);
  Kind kind() const { return kind_; }
  CommitQueue<Item>* commit_queue() { return commit_queue_.get(); }
  SpscRing<Item>* ring() { return ring_.get(); }
  const std::string& name() const { return name_; }
  std::atomic<bool> producer_done{false};  // upstream FINISHED: nothing more will be written
  std::atomic<bool> consumer_done{false};  // downstream FINISHED: stop writing

 private:
  Kind kind_;
  std::vector<Item>* sink_;
  std::string name_;
  std::unique_ptr<SpscRing<Item>> ring_;
  std::unique_ptr<CommitQueue<Item>> commit_queue_;
};

// The static checks of check_parallel: commit queue sizes and declared cardinalities.
void check_unit(const Unit& unit, bool commit_in, const std::string& in_name, const ParallelOptions& options);

// ---------------------------------------------------------------------------------------------
// Tasks (parallel_tasks.cpp)

// What a scheduler thread runs: a step does at most `budget` steps of work.
class Task {
 public:
  enum Status { Progress, Blocked, Done };
  virtual ~Task() = default;
  virtual Status step(unsigned budget) = 0;
  virtual std::string describe() const = 0;
};

// Writes the program's input into `channel`, then marks it producer_done.
std::unique_ptr<Task> make_source_task(const std::vector<Item>& input, Channel* channel);

// ---------------------------------------------------------------------------------------------
// The scheduler (parallel_scheduler.cpp; activate and start_pipeline in parallel_tasks.cpp)

// One scheduler thread's tasks: the ring it visits in turn, and the inbox other threads spawn into.
struct SchedulerThread {
  std::vector<std::unique_ptr<Task>> ring;
  std::mutex mutex;
  std::vector<std::unique_ptr<Task>> inbox;
  std::atomic<bool> has_inbox{false};
  std::condition_variable wake;  // a thread with no tasks sleeps here until a spawn or the end
  bool asleep = false;           // guarded by mutex: sleeping there and not yet counted awake by a waker
  // Visits that made progress; written by the thread only, read by idle threads that yielded.
  alignas(64) std::atomic<std::uint64_t> progress{0};
  // For CoreShare: the thread's CPU-time clock (set before has_cpu_clock), the CPU it was last seen
  // on (-1: unknown), when its trampoline began (steady-clock ns; 0: not running), the time it
  // has slept so far, and since when it sleeps now (0: awake).
  clockid_t cpu_clock{};
  std::atomic<bool> has_cpu_clock{false};
  std::atomic<int> cpu{-1};
  std::atomic<long long> started_ns{0}, asleep_ns{0}, asleep_since_ns{0};
};

// Runs the tasks of one program run on layout.threads() trampolines, tracks when the run is over
// and the first failure, and wakes idle threads that sleep.
class Scheduler {
 public:
  Scheduler(const Layout& layout, const ParallelOptions& options);

  void activate(const Unit& unit, Channel* in, Channel* out, const Env& env, Callback done);
  void start_pipeline(const Unit& owner, std::vector<const Unit*> stages, int computer_stage,
                      std::optional<Cards> cards, Channel* in, Channel* out, const Env& env, Callback done);
  void spawn(unsigned thread, std::unique_ptr<Task> task);
  // The trampoline of scheduler thread `index`; returns when the run is over or failed.
  void run_thread(unsigned index);

  void fail(std::exception_ptr e);
  void set_root_done();
  std::exception_ptr error();
  // Called after every change another scheduler thread may be waiting for (a task made progress or
  // finished, a task was spawned, the run ended or failed). Cheap while nobody is parked.
  void wake_parked();

  const Layout& layout() const { return layout_; }
  const ParallelOptions& options() const { return options_; }
  std::uint64_t tasks_run() const { return tasks_run_.load(); }
  std::uint64_t parks() const { return parks_.load(); }

  // Per thread, written by that thread, read after the team's wait().
  std::vector<double> busy_seconds;
  std::vector<double> spin_seconds;  // time spent polling while idle
  std::atomic<std::uint64_t> commits{0}, committed_items{0}, rollbacks{0}, rolled_back_items{0};
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();

 private:
  class ThreadLoop;  // run_thread's state and steps (parallel_trampoline.cpp)

  // Wakes the threads that sleep with no tasks, to see the run end or fail.
  void wake_empty_threads();
  // Under thread.mutex: a thread asleep without tasks counts as awake from its waker's signal on.
  void count_awake(SchedulerThread& thread);
  bool run_over() const;
  std::uint64_t progress() const;  // summed over the threads
  CoreShare::Usage usage(std::chrono::steady_clock::time_point now) const;

  const Layout& layout_;
  ParallelOptions options_;
  std::vector<std::unique_ptr<SchedulerThread>> threads_;
  std::atomic<long> live_{0};
  std::atomic<std::uint64_t> tasks_run_{0};
  std::atomic<bool> root_done_{false}, abort_{false};
  // What an idle thread looks at before it polls (see ThreadLoop): threads not asleep (a waker
  // counts the threads it wakes at once, so that they are not taken for asleep while the kernel
  // schedules them), the cores this process may use, and whether the run's threads get them.
  std::atomic<unsigned> awake_threads_{0};
  unsigned cores_;
  CoreShare core_share_;
  // Parking of idle scheduler threads (see ThreadLoop).
  std::atomic<unsigned> parked_{0};
  std::atomic<std::uint64_t> parks_{0};
  std::mutex park_mutex_;
  std::condition_variable park_cv_;
  std::uint64_t park_epoch_ = 0;  // guarded by park_mutex_
  unsigned asleep_parked_ = 0;    // guarded by park_mutex_: parked threads asleep, not yet counted awake
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace korch::streams::detail
