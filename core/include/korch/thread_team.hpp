// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam: the orchestration runtime's thread team (design: docs/thread-team.md).
//
// A team owns N_max threads, created at construction and kept until destruction. In each execution
// cycle it applies one action routine to every data item given to it:
//
//   team.start_cycle(routine, n_active, params);   // Idle -> RunningOpen, activates n_active threads
//   team.enqueue(item); ...                        // RunningOpen only
//   team.close_queue();                            // -> RunningClosed / RunningNoMoreWork / Idle
//   team.wait();                                   // blocks until the team is Idle again
//
// The team is an extended finite-state machine: the mode (TeamMode) and the counters
// N_i (Idle threads), N_w (Waiting), N_c (Computing), N_Q (queued items) and the threads pending
// activation change only in atomic transitions under the team's one mutex. Public events are the
// methods above and increase_thread_count; internal events are activateThread, transitionThread and
// computationFinished, each received by one team thread.
//
// Publishers and subscribers (one-directional observers):
//  * work subscriber: every item this team finished (or, for an emitting routine, every item the
//    routine emitted; see action_routine.hpp) is enqueued with the subscriber; when this team goes
//    Idle it closes the subscriber's queue (after its last item and its end-of-cycle outputs). A subscriber with
//    several work publishers leaves RunningOpen only after each of them has closed it.
//  * thread subscriber: every thread of this team that goes Idle (and every activation this team
//    does not need) is handed on with subscriber.increase_thread_count(1).
// A team publishes to at most one work and one thread subscriber, never to itself, and the
// publisher graph may not contain a cycle. Call wait() on a publisher before its subscribers.
//
// Errors: misuse (wrong mode, too many threads, ...) throws korch::Error from the call, naming the
// team, its mode and the fix. An exception from an action routine (or a failed delivery to a
// subscriber) does not stop the cycle: the remaining items are drained and counted as skipped, the
// subscribers are still closed, the team returns to Idle and wait() throws a korch::Error (with the
// original exception nested) naming the team, the routine and the item.
#pragma once

#include <korch/action_parameters.hpp>
#include <korch/action_routine.hpp>
#include <korch/data_item.hpp>
#include <korch/team_mode.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace korch {

// What happened to the items of one execution cycle. At the end of a cycle
// enqueued == processed + failed + skipped, and with a work subscriber and a routine whose output is
// its item, processed == forwarded + undelivered (an emitting routine forwards what it emitted).
struct CycleReport {
  std::uint64_t cycle = 0;      // 1 for the team's first cycle; 0: no cycle yet
  std::string routine;          // the action routine's name
  std::size_t enqueued = 0;     // items the team accepted
  std::size_t processed = 0;    // the routine returned normally
  std::size_t failed = 0;       // the routine threw
  std::size_t skipped = 0;      // not given to the routine: the cycle had already failed, or the team was destroyed
  std::size_t forwarded = 0;    // items handed to the work subscriber
  std::size_t undelivered = 0;  // outputs the work subscriber refused, or emitted with none (see error)
  // Threads handed to the thread subscriber, and threads handed to this team by its thread
  // publishers, from this cycle's start to the next one's (threads that pass through the Idle team
  // after the cycle are included), so that over a round of cycles each team hands on exactly the
  // threads it was given and activated.
  std::size_t threads_forwarded = 0;
  std::size_t threads_received = 0;
  // Times a sleeping team thread was woken (same span as the thread counts above). A cycle wakes
  // a thread only for an item (docs/thread-team.md, "Waking for items").
  std::size_t wakeups = 0;
  std::size_t errors = 0;  // errors in this cycle; `error` describes the first
  std::string error;
  // When the cycle ended for the team (its last item done and its queue closed, before wait()
  // returns); the epoch before that. The runtime measures its pipelines with it
  // (DistributionPolicy::throughput).
  std::chrono::steady_clock::time_point finished{};
};

// The team's state at one instant, read in one critical section (consistent, never torn).
struct TeamSnapshot {
  TeamMode mode = TeamMode::Idle;
  unsigned n_max = 0;
  unsigned n_idle = 0;         // N_i, threads pending activation included
  unsigned n_waiting = 0;      // N_w
  unsigned n_computing = 0;    // N_c (a thread delivering its outputs counts as Computing)
  unsigned n_to_activate = 0;  // activations sent but not yet received
  std::size_t n_queued = 0;    // N_Q
  bool finishing = false;      // Idle, but the outputs of the last transition are still being delivered
  bool waiter_blocked = false;
  unsigned closes_pending = 0;  // close_queue calls (from publishers or external code) still needed
  unsigned work_publishers = 0;
  unsigned external_work_publishers = 0;
  unsigned thread_publishers = 0;
  bool has_work_subscriber = false;
  bool has_thread_subscriber = false;
  CycleReport cycle;  // the running cycle, or the last one when Idle
};

// Events of the EFSM, reported to a TransitionObserver.
enum class TeamEvent {
  start_cycle,
  increase_thread_count,  // from external code
  threads_received,       // from a thread publisher
  enqueue,                // from external code
  item_received,          // from a work publisher
  close_queue,            // from external code
  publisher_closed,       // from a work publisher
  activate_thread,        // received by a team thread
  transition_thread,      // received by a team thread
  computation_finished,   // a team thread finished an item
  cycle_finished,         // the Idle transition's outputs were delivered; wait() is released
};
const char* to_string(TeamEvent event) noexcept;

struct TeamTransition {
  TeamEvent event;
  int thread;  // team thread index, or -1 for a caller outside the team
  std::uint64_t cycle;
  TeamMode mode;  // after the transition
  unsigned n_idle, n_waiting, n_computing, n_to_activate;
  std::size_t n_queued;
};

// Called at the end of every transition, inside the team's critical section: it sees each state the
// EFSM passes through, in order. It must be quick and must not call the team (or teams linked to it).
using TransitionObserver = std::function<void(const TeamTransition&)>;

// Scheduler tuning. The defaults suit every use measured so far; each knob is explained in
// docs/thread-team.md, "Tuning".
struct TeamOptions {
  std::chrono::microseconds spin{20};             // longest poll before a waiting thread sleeps; 0: sleep at once
  bool waiter_works = true;                       // a caller in wait() runs queued items of its cycle
  bool waiter_joins = false;                      // ... and may stand in for an Idle thread of the team
  std::chrono::microseconds contended_nap{1000};  // on a contended core, longest sleep without a wake-up; 0: off
  unsigned naps_per_cycle = 4;  // ... only in a team whose cycles last at least this many naps; 0: any
};

// Thread safety: every call may be made from any thread; each is one atomic transition of the team.
// The call-order rules (which mode each call needs) are checked and broken ones throw korch::Error.
class ThreadTeam {
 public:
  // Starts n_max >= 1 threads, all Idle. Kokkos must be initialized (each thread owns instances).
  //   ThreadTeam team("cpu", 4);
  ThreadTeam(std::string name, unsigned n_max, TeamOptions options = {});
  // Possible in any mode, also from the team's own routine: running threads finish the item in
  // hand, queued items are released and counted as skipped, subscribers are closed, and links with
  // other teams are removed.
  ~ThreadTeam();

  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;
  ThreadTeam(ThreadTeam&&) = delete;
  ThreadTeam& operator=(ThreadTeam&&) = delete;

  // The team whose worker thread calls this (or whose items a caller in wait() runs), else nullptr.
  //   if (ThreadTeam::current() == &team) { /* inside one of team's routines */ }
  static const ThreadTeam* current() noexcept;

  const std::string& name() const noexcept;  // as given, cut to a bounded excerpt
  unsigned id() const noexcept;              // unique in the process, in order of construction
  unsigned n_max() const noexcept;           // the team's threads

  // ---- public events ----
  // Idle -> RunningOpen: `routine` is applied to every item of this cycle; n_active (<= N_max)
  // threads are activated at once. Needs Idle and the previous cycle's error collected by wait().
  //   team.start_cycle(ActionRoutine("update", update), 2);
  void start_cycle(ActionRoutine routine, unsigned n_active, ActionParameters parameters = {});
  // Activates n more Idle threads (RunningOpen/RunningClosed), or hands them to the thread
  // subscriber when the team does not need them (Idle/RunningNoMoreWork). In a running cycle it is
  // an error to ask for more threads than are Idle and not already pending activation.
  //   team.increase_thread_count(1);
  void increase_thread_count(unsigned n);
  // Gives the team one item (RunningOpen only). The team owns it from now on.
  //   team.enqueue(std::make_shared<MyItem>(...));
  void enqueue(std::shared_ptr<DataItem> item);
  // Gives the team several items in one critical section, in order (RunningOpen only): all of them
  // or, with a null item or outside RunningOpen, none (the error says which). Feeders that have
  // many items at once use it to take the team's lock once instead of once per item.
  //   team.enqueue(std::move(items));
  void enqueue(std::vector<std::shared_ptr<DataItem>> items);
  // Says that external code will enqueue nothing more this cycle (RunningOpen only). A team with
  // work publishers is closed by them instead; see add_external_work_publisher.
  //   team.close_queue();
  void close_queue();
  // Blocks until the running cycle is over (all items processed, outputs delivered, Idle); returns
  // at once in Idle. Allowed in RunningOpen. At most one thread may wait per cycle. Throws the
  // cycle's error if it failed. While it waits, the caller may run items of the cycle (see
  // TeamOptions::waiter_works), so routines can run on the thread that calls wait().
  //   team.wait();
  void wait();

  // ---- publishers and subscribers (both teams Idle) ----
  //   cpu.attach_work_subscriber(gpu);   // gpu gets every item cpu finished, and cpu's close
  void attach_work_subscriber(ThreadTeam& subscriber);
  void detach_work_subscriber();
  //   cpu.attach_thread_subscriber(post); // post gets each thread cpu no longer needs
  void attach_thread_subscriber(ThreadTeam& subscriber);
  void detach_thread_subscriber();
  // For a team that has team work publishers and is also fed by external code (a distributor, a
  // helper): each registered external publisher must call close_queue() once per cycle. Without
  // team publishers, one close_queue() from external code closes the queue.
  void add_external_work_publisher();
  void remove_external_work_publisher();

  // ---- observation (each call is one consistent reading) ----
  //   if (team.mode() == TeamMode::Idle) report(team.last_cycle());
  TeamMode mode() const;
  TeamSnapshot snapshot() const;
  CycleReport last_cycle() const;                             // the last finished cycle
  void set_transition_observer(TransitionObserver observer);  // Idle only; empty to remove
  // The name every later message quotes (Idle only, and not while another thread reads name()): a
  // runtime names its pooled teams after the nodes they run in each cycle.
  //   team.rename("cpu");
  void rename(std::string name);

 private:
  class Impl;  // core/src/thread_team/thread_team_impl.hpp
  std::unique_ptr<Impl> impl_;
};

}  // namespace korch
