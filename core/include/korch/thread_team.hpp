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
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
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

struct TeamOptions {
  // The longest an out-of-work thread (and a caller in wait()) polls for its next event before it
  // sleeps on its condition variable. Polling saves two context switches when work arrives within
  // the window. At most one thread per hardware thread polls at a time in the whole process (team
  // threads and callers in wait()); the others sleep at once. Each waiter adapts its own poll within
  // this limit: shorter after polls that were descheduled (oversubscribed cores) or that waited in
  // vain, longer again while events come quickly. A thread whose core is contended also leaves an
  // event it receives this long to a caller that will take it in wait() (docs/thread-team.md,
  // "Waiting"). 0: always sleep at once, and never leave an event.
  std::chrono::microseconds spin{20};
  // Whether a caller blocked in wait() runs queued items of the cycle itself, in place of a
  // thread of the cycle that sleeps (it runs with that thread's index and instances, so routines
  // see no difference; the count of threads working on the cycle stays what was asked for).
  bool waiter_works = true;
  // Whether that caller may also join the cycle in place of an Idle thread of the team (never more
  // than N_max threads), when items are queued and no parked thread of the cycle is left to stand
  // in for: the caller then works as one of the cycle's threads, as an OpenMP master thread does,
  // so a team of n threads started with n-1 active keeps n cores busy with n OS threads. Ignored
  // for a team with thread publishers, whose threads must find the team's Idle threads free (Req
  // ThreadBalance).
  bool waiter_joins = false;
  // On a contended core, the longest a team thread that a caller in wait() could replace sleeps
  // before it looks for an event nobody woke it for. While it sleeps this way, events sent to it
  // come without a wake-up (a system call for the sender, and on a busy machine a preemption): the
  // caller takes them in wait(), the sender notifies them once it blocks itself, or the thread
  // finds them when its sleep ends. Items of a sender that goes on running its own code thus start
  // at most this much later, only while the core is contended, where a wake-up itself takes about
  // as long (docs/thread-team.md, "Nap on a contended core"). Not for teams fed by other teams or
  // with thread publishers, nor with waiter_works off or waiter_joins on. 0: always woken.
  std::chrono::microseconds contended_nap{1000};
};

class ThreadTeam {
 public:
  // Starts n_max >= 1 threads, all Idle. Kokkos must be initialized (each thread owns instances).
  ThreadTeam(std::string name, unsigned n_max, TeamOptions options = {});
  // Possible in any mode: running threads finish the item in hand, queued items are released and
  // counted as skipped, subscribers are closed, and links with other teams are removed.
  ~ThreadTeam();

  ThreadTeam(const ThreadTeam&) = delete;
  ThreadTeam& operator=(const ThreadTeam&) = delete;
  ThreadTeam(ThreadTeam&&) = delete;
  ThreadTeam& operator=(ThreadTeam&&) = delete;

  // The team whose worker thread calls this, or nullptr on any other thread.
  static const ThreadTeam* current() noexcept;

  const std::string& name() const noexcept { return name_; }
  unsigned id() const noexcept { return id_; }
  unsigned n_max() const noexcept { return n_max_; }

  // ---- public events ----
  // Idle -> RunningOpen: `routine` is applied to every item of this cycle; n_active (<= N_max)
  // threads are activated at once. Needs Idle and the previous cycle's error collected by wait().
  void start_cycle(ActionRoutine routine, unsigned n_active, ActionParameters parameters = {});
  // Activates n more Idle threads (RunningOpen/RunningClosed), or hands them to the thread
  // subscriber when the team does not need them (Idle/RunningNoMoreWork). In a running cycle it is
  // an error to ask for more threads than are Idle and not already pending activation.
  void increase_thread_count(unsigned n);
  // Gives the team one item (RunningOpen only). The team owns it from now on.
  void enqueue(std::shared_ptr<DataItem> item);
  // Gives the team several items in one critical section, in order (RunningOpen only): all of them
  // or, with a null item or outside RunningOpen, none (the error says which). Feeders that have
  // many items at once use it to take the team's lock once instead of once per item.
  void enqueue(std::vector<std::shared_ptr<DataItem>> items);
  // Says that external code will enqueue nothing more this cycle (RunningOpen only). A team with
  // work publishers is closed by them instead; see add_external_work_publisher.
  void close_queue();
  // Blocks until the running cycle is over (all items processed, outputs delivered, Idle); returns
  // at once in Idle. Allowed in RunningOpen. At most one thread may wait per cycle. Throws the
  // cycle's error if it failed. While it waits, the caller may run items of the cycle (see
  // TeamOptions::waiter_works), so routines can run on the thread that calls wait().
  void wait();

  // ---- publishers and subscribers (both teams Idle) ----
  void attach_work_subscriber(ThreadTeam& subscriber);
  void detach_work_subscriber();
  void attach_thread_subscriber(ThreadTeam& subscriber);
  void detach_thread_subscriber();
  // For a team that has team work publishers and is also fed by external code (a distributor, a
  // helper): each registered external publisher must call close_queue() once per cycle. Without
  // team publishers, one close_queue() from external code closes the queue.
  void add_external_work_publisher();
  void remove_external_work_publisher();

  // ---- observation (thread-safe; each call is one consistent reading) ----
  TeamMode mode() const;
  TeamSnapshot snapshot() const;
  CycleReport last_cycle() const;                             // the last finished cycle
  void set_transition_observer(TransitionObserver observer);  // Idle only; empty to remove

 private:
  struct Worker;
  class ItemRing;
  struct WaitSlot;
  struct WakeList;
  struct PublisherLink {
    ThreadTeam* team;
    bool closed;  // closed this cycle
  };
  enum class Origin { external, publisher };

  void worker_main(Worker& w, std::mutex& mutex);
  bool run_items(Worker& w, std::unique_lock<std::mutex>& lk, TeamEvent first_event);
  struct TakenItem;
  TakenItem take_item(std::unique_lock<std::mutex>& lk, TeamEvent event, int thread);
  bool run_taken_item(Worker& w, const ActionContext& context, TakenItem& taken, std::unique_lock<std::mutex>& lk);
  struct Delivery {
    std::size_t forwarded = 0;
    std::size_t undelivered = 0;
    std::string refused;  // the first refusal
  };
  Delivery deliver(ThreadTeam* subscriber, ActionContext::Outputs& outputs);
  void deliver_one(ThreadTeam* subscriber, std::shared_ptr<DataItem>& item, Delivery& d);
  void count_delivery(Delivery& delivery);
  bool run_end_of_cycle(const ActionContext& context, ActionContext::Outputs& outputs,
                        std::unique_lock<std::mutex>& lk);
  void go_idle(Worker& w, std::unique_lock<std::mutex>& lk, TeamEvent event);
  void park(Worker& w, std::unique_lock<std::mutex>& lk);
  bool sleep_until_signalled(Worker& w, std::unique_lock<std::mutex>& lk);  // true: it slept
  bool may_nap(const Worker& w) const;
  static void step_off_waker_core(Worker& w, std::unique_lock<std::mutex>& lk);
  static void give_caller_time_to_enqueue(const Worker& w);
  bool leave_event_to_caller(Worker& w, std::unique_lock<std::mutex>& lk);
  static bool leaves_event(const Worker& w);
  static bool caller_takes_event(Worker& w, std::chrono::nanoseconds window);
  void work_while_waiting(const WaitSlot& slot, std::unique_lock<std::mutex>& lk);
  Worker* take_parked_thread(TeamEvent& event);
  bool receive_in_place_of(Worker& w, TeamEvent& event);
  Worker* join_in_place_of_idle_thread(TeamEvent& event);
  void activate(unsigned n, WakeList& wake);
  void receive_activations_in_place();
  void receive_transitions_in_place(std::unique_lock<std::mutex>& lk);
  static Worker* pop_preferring_awake(std::vector<Worker*>& parked);
  void wake_all_waiting(WakeList& wake);
  void wake_one_waiting(WakeList& wake, bool even_napping = false);
  void forward_threads(std::unique_lock<std::mutex>& lk, unsigned n);
  void count_threads(std::size_t CycleReport::*counter, unsigned n);
  void release_outbound();
  void after_close(std::unique_lock<std::mutex>& lk, TeamEvent event, int thread, WakeList& wake);
  void finish_cycle(std::unique_lock<std::mutex>& lk, TeamEvent event, int thread);
  void wait_until(std::unique_lock<std::mutex>& lk, const std::function<bool()>& done);
  bool stranded() const;
  std::exception_ptr stranded_error() const;
  void observe(TeamEvent event, int thread);
  void record_error(std::string message, std::exception_ptr cause);
  void require_quiescent_idle(const char* what) const;
  std::string describe_state() const;

  // Entry points for publisher teams: they never throw; a refusal comes back as a message.
  std::string receive_item(std::shared_ptr<DataItem>& item, const ThreadTeam& from);
  std::string receive_close(const ThreadTeam& from);
  void receive_threads(unsigned n, const ThreadTeam& from);
  std::string accept_item(std::shared_ptr<DataItem>& item, Origin origin, const char* caller);
  std::string push_if_open(std::shared_ptr<DataItem>* items, std::size_t n, Origin origin, TeamMode& mode);
  std::string refusal(const std::string& state, TeamMode mode, const DataItem& item, Origin origin,
                      const char* caller) const;
  void unlink_on_destruction();
  static std::mutex& topology_mutex();

  // ---- constant after construction ----
  const std::string name_;
  const unsigned id_;
  const unsigned n_max_;
  const TeamOptions options_;

  // ---- EFSM state: all guarded by mutex_ ----
  // The mutex is shared with the team threads: a thread asleep when the team is destroyed is not
  // waited for, and still locks it when it wakes (docs/thread-team.md, "Destruction").
  const std::shared_ptr<std::mutex> shared_mutex_;
  std::mutex& mutex_;
  TeamMode mode_ = TeamMode::Idle;
  unsigned n_idle_ = 0;
  unsigned n_waiting_ = 0;
  unsigned n_computing_ = 0;
  // Computing threads inside go_idle's forward (mutex released): done with the cycle's items, so
  // not counted when the end-of-cycle step looks for the last computing thread.
  unsigned n_leaving_ = 0;
  unsigned n_to_activate_ = 0;
  unsigned transitions_in_flight_ = 0;  // transitionThread sent, not yet received
  std::unique_ptr<ItemRing> queue_;
  std::vector<Worker*> idle_parked_;              // Idle threads not yet sent activateThread
  std::vector<Worker*> waiting_parked_;           // Waiting threads not yet sent transitionThread
  std::vector<Worker*> activated_in_place_;       // see activate(): their activation is received in place
  std::vector<Worker*> waiting_in_place_;         // see wake_all_waiting(): their transition is made in place
  std::vector<std::shared_ptr<Worker>> workers_;  // shared with their threads (see mutex_)

  ActionRoutine routine_;  // written only in Idle, read by threads during the cycle
  ActionParameters parameters_;
  std::uint64_t cycle_ = 0;
  CycleReport report_;
  CycleReport last_report_;
  bool cycle_failed_ = false;
  bool end_of_cycle_ran_ = false;
  // How long the item run right after the last transitionThread passed on took (see run_items).
  std::chrono::nanoseconds passed_on_item_time_{0};
  // When start_cycle made it RunningOpen, in the cycles that are timed (see detail::tiny_item_time).
  std::chrono::steady_clock::time_point cycle_started_{};
  std::exception_ptr first_cause_;
  std::exception_ptr pending_error_;  // a finished cycle's error not yet collected by wait()

  bool finishing_ = false;  // Idle, but delivering the Idle transition's outputs
  bool terminating_ = false;
  WaitSlot* waiter_ = nullptr;                   // the one thread blocked in wait() this cycle
  std::chrono::nanoseconds waiter_spin_budget_;  // how long wait() polls (adapted, see polling.hpp)
  unsigned n_blocked_ = 0;                       // callers blocked on done_cv_
  unsigned outbound_ = 0;                        // calls into subscribers in flight (unlocked)
  std::condition_variable done_cv_;

  ThreadTeam* work_subscriber_ = nullptr;
  ThreadTeam* thread_subscriber_ = nullptr;
  std::vector<PublisherLink> work_publishers_;
  std::vector<ThreadTeam*> thread_publishers_;
  unsigned external_publishers_ = 0;
  unsigned publisher_closes_pending_ = 0;
  unsigned external_closes_pending_ = 0;

  TransitionObserver observer_;
};

}  // namespace korch
