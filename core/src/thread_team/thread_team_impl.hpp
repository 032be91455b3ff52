// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam's state and its private steps: thread_team.hpp is the API and each of its calls is one
// call here. The implementation notes are in thread_team.cpp; docs/thread-team.md is the design.
#pragma once

#include <korch/thread_team.hpp>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace korch {

class ThreadTeam::Impl {
 public:
  Impl(ThreadTeam& self, std::string name, unsigned n_max, TeamOptions options);
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  const std::string& name() const noexcept { return name_; }
  unsigned id() const noexcept { return id_; }
  unsigned n_max() const noexcept { return n_max_; }

  void start_cycle(ActionRoutine routine, unsigned n_active, ActionParameters parameters = {});
  void increase_thread_count(unsigned n);
  void enqueue(std::shared_ptr<DataItem> item);
  void enqueue(std::vector<std::shared_ptr<DataItem>> items);
  void close_queue();
  void wait();

  void attach_work_subscriber(Impl& subscriber);
  void detach_work_subscriber();
  void attach_thread_subscriber(Impl& subscriber);
  void detach_thread_subscriber();
  void add_external_work_publisher();
  void remove_external_work_publisher();

  TeamMode mode() const;
  TeamSnapshot snapshot() const;
  CycleReport last_cycle() const;  // the last finished cycle
  void set_transition_observer(TransitionObserver observer);
  void rename(std::string name);  // Idle only; empty to remove

 private:
  struct Worker;
  class ItemRing;
  struct WaitSlot;
  struct WakeList;
  struct PublisherLink {
    Impl* team;
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
  Delivery deliver(Impl* subscriber, ActionContext::Outputs& outputs);
  void deliver_one(Impl* subscriber, std::shared_ptr<DataItem>& item, Delivery& d);
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
  std::string receive_item(std::shared_ptr<DataItem>& item, const Impl& from);
  std::string receive_close(const Impl& from);
  void receive_threads(unsigned n, const Impl& from);
  std::string accept_item(std::shared_ptr<DataItem>& item, Origin origin, const char* caller);
  std::string push_if_open(std::shared_ptr<DataItem>* items, std::size_t n, Origin origin, TeamMode& mode);
  std::string refusal(const std::string& state, TeamMode mode, const DataItem& item, Origin origin,
                      const char* caller) const;
  void unlink_on_destruction();
  static std::mutex& topology_mutex();

  // ---- constant after construction ----
  ThreadTeam& self_;  // the API object that owns this state (ThreadTeam::current() names it)
  std::string name_;  // changed only by rename(), in a quiescent Idle
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
  // The last timed cycle's length, from start_cycle to its end (see may_nap); 0 before the first.
  std::chrono::nanoseconds recent_cycle_time_{0};
  std::exception_ptr first_cause_;
  std::exception_ptr pending_error_;  // a finished cycle's error not yet collected by wait()

  bool finishing_ = false;  // Idle, but delivering the Idle transition's outputs
  bool terminating_ = false;
  WaitSlot* waiter_ = nullptr;                   // the one thread blocked in wait() this cycle
  std::chrono::nanoseconds waiter_spin_budget_;  // how long wait() polls (adapted, see polling.hpp)
  unsigned n_blocked_ = 0;                       // callers blocked on done_cv_
  unsigned outbound_ = 0;                        // calls into subscribers in flight (unlocked)
  std::condition_variable done_cv_;

  Impl* work_subscriber_ = nullptr;
  Impl* thread_subscriber_ = nullptr;
  std::vector<PublisherLink> work_publishers_;
  std::vector<Impl*> thread_publishers_;
  unsigned external_publishers_ = 0;
  unsigned publisher_closes_pending_ = 0;
  unsigned external_closes_pending_ = 0;

  TransitionObserver observer_;
};

}  // namespace korch
