// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The parallel executor.
//
// The program's Layout merges every barrier-free subtree into one task and assigns each task a
// scheduler thread. Each scheduler thread (a korch::ThreadTeam thread) runs a trampoline: a ring of
// ready tasks visited in turn; a visit ticks the task's instance or feeds it one input (a bounded
// number of steps per visit), a task that is done is removed in O(1) (the ring may become empty),
// and tasks activated from other threads arrive through the thread's inbox.
//
// Queues between pipeline stages: an SpscRing where the consumer is one task, a CommitQueue where
// the consumer is a bind/loop/conditional (consumers change over time). For
// `x <- t |>>>| c1 ; c2 x`, t reads the commit queue optimistically; c1 counts its takes k and
// commits takes(cards(t), k) minus what it already committed whenever the queue is full (batched
// commits) and when it finishes; after t and c1 have stopped, the rest is rolled back and c2 starts
// at the front, so no item is lost or read twice.
//
// Termination (section 8): a finishing computer sets FINISHED upstream (consumer_done on its input)
// and downstream (producer_done on its output), except at its pipeline's own ends, whose queues the
// continuation shares. A stage stops when its output says consumer_done, and starves when its input
// says producer_done and is empty; starving is told apart from finishing, so repeat/times/until
// restart only after a normal finish and a starved body ends the loop (and the program).
#pragma once

#include <korch/streams/plan.hpp>
#include <korch/streams/sequential.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace korch {
class ThreadTeam;
}

namespace korch::streams {

struct ParallelOptions {
  unsigned threads = 2;                   // scheduler threads
  std::size_t queue_capacity = 256;       // SPSC rings
  std::size_t commit_queue_capacity = 0;  // commit queues; 0: queue_capacity
  unsigned steps_per_visit = 64;          // trampoline: steps a task may take per visit
  std::chrono::milliseconds timeout{0};   // > 0: abort with korch::Error when the run takes longer
  // The longest an idle scheduler thread (every task blocked, or none) polls before it sleeps until
  // another scheduler thread makes progress or gives it a task. Polling keeps hand-offs fast while
  // data flows (a futex wake-up costs more than the gaps between items of a busy pipeline); sleeping
  // keeps a thread that waits for a slow stage off its core. Below this bound each thread adapts
  // its polling to its recent waits (less after waits polling could not have caught, more after
  // ones it just missed), and it sleeps at once while polling cannot pay off: no other thread of
  // the run is awake, the run's threads get clearly less CPU than the cores they sit on (other
  // threads want them), or it was just descheduled (docs/streams.md, "Waiting for work").
  // 0: sleep at once. std::chrono::microseconds::max(): never sleep, whatever the load.
  std::chrono::microseconds idle_spin{1000};
};

struct CommitStats {
  std::uint64_t commits = 0;  // commit(n) calls with n > 0
  std::uint64_t committed_items = 0;
  std::uint64_t rollbacks = 0;
  std::uint64_t rolled_back_items = 0;  // optimistic reads undone (read again by the continuation)
};

struct ParallelResult : RunResult {
  std::vector<std::string> warnings;  // e.g. more standalone components than threads
  CommitStats commits;
  std::uint64_t tasks_run = 0;  // task activations, the source task included
  std::uint64_t parks = 0;      // times a scheduler thread went to sleep (see idle_spin)
  double spin_seconds = 0;      // time idle scheduler threads polled on their cores, summed
  // Per scheduler thread: wall time spent in task visits that made progress. The sum over the
  // maximum is the speedup the task split allows on idle cores (a load-independent bound).
  std::vector<double> busy_seconds;
};

// Runs `program` on `input` with options.threads scheduler threads taken from `team` (which needs
// n_max >= threads and must be Idle) or from a team of its own when `team` is null. Errors: a
// commit queue below minQSize, a commit that needs a cardinality nobody declared, an exception in a
// component: korch::Error naming the queue or the task. `consumed` is the number of input items
// given away for good (committed, or popped from an SPSC input).
ParallelResult run_parallel(const Comp& program, const std::vector<Item>& input, const ParallelOptions& options = {},
                            ThreadTeam* team = nullptr, const Env& env = {});

// The static checks run_parallel does first (commit queue sizes, declared cardinalities), without
// running anything. Throws korch::Error.
void check_parallel(const Layout& layout, const ParallelOptions& options);

}  // namespace korch::streams
