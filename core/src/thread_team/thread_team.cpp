// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ThreadTeam implementation. Read thread_team.hpp and docs/thread-team.md first.
//
// Implementation notes
//  * One mutex (mutex_) guards every EFSM variable. Each event is one critical section that leaves
//    the counters consistent (N_i + N_w + N_c == N_max); the observer sees that state.
//  * Events to threads (activateThread, transitionThread, termination) are delivered directly: the
//    sender pops a parked thread from idle_parked_ / waiting_parked_ and sets that thread's signal
//    under the mutex, so exactly the threads that are really waiting get an event (no notify storm,
//    no lost wake-up), and notifies its condition variable after unlocking, and only if the thread is
//    asleep. A thread polls its signal for up to TeamOptions::spin before it sleeps (polling.hpp:
//    at most one poller per hardware thread, never a yield, shorter polls after it was descheduled).
//  * At most one transitionThread is in flight while items are queued; the thread that receives it
//    and takes an item passes it on when more items and Waiting threads remain (wake chaining).
//  * Calls into other teams (items, threads and close to subscribers) are made without holding
//    mutex_, so teams can publish to each other in any acyclic pattern without lock-order deadlock.
//    outbound_ counts such calls in flight; a cycle is only declared finished, and a subscriber only
//    destroyed, once they have returned.
//  * docs/thread-team-model.md: a Promela model of these transitions, checked with spin; the
//    comments "model: ..." name its steps where the code performs them.
//  * The transition to Idle sets mode_ = Idle with finishing_ = true, delivers its outputs (threads to
//    the thread subscriber, close to the work subscriber) and only then releases wait(). start_cycle,
//    attach and detach wait for (or refuse) a team that is still finishing.
#include <korch/thread_team.hpp>

#include "thread_team_internals.hpp"

#include <korch/error.hpp>
#include <korch/excerpt.hpp>

#include <fmt/format.h>

#include <atomic>
#include <system_error>

#include <algorithm>
#include <utility>

namespace korch {

using detail::describe_item;
using detail::lock_briefly_spinning;
using detail::message_of;

namespace {
std::atomic<unsigned> next_team_id{0};
}  // namespace

const char* to_string(TeamEvent event) noexcept {
  switch (event) {
    case TeamEvent::start_cycle: return "start_cycle";
    case TeamEvent::increase_thread_count: return "increase_thread_count";
    case TeamEvent::threads_received: return "threads_received";
    case TeamEvent::enqueue: return "enqueue";
    case TeamEvent::item_received: return "item_received";
    case TeamEvent::close_queue: return "close_queue";
    case TeamEvent::publisher_closed: return "publisher_closed";
    case TeamEvent::activate_thread: return "activateThread";
    case TeamEvent::transition_thread: return "transitionThread";
    case TeamEvent::computation_finished: return "computationFinished";
    case TeamEvent::cycle_finished: return "cycle_finished";
  }
  return "?";
}

std::mutex& ThreadTeam::Impl::topology_mutex() {
  static std::mutex m;
  return m;
}

// ---------------------------------------------------------------------------------------------
// The API: each call is one call of the implementation

ThreadTeam::ThreadTeam(std::string name, unsigned n_max, TeamOptions options)
    : impl_(std::make_unique<Impl>(*this, std::move(name), n_max, options)) {}
ThreadTeam::~ThreadTeam() = default;

const std::string& ThreadTeam::name() const noexcept { return impl_->name(); }
unsigned ThreadTeam::id() const noexcept { return impl_->id(); }
unsigned ThreadTeam::n_max() const noexcept { return impl_->n_max(); }

void ThreadTeam::start_cycle(ActionRoutine routine, unsigned n_active, ActionParameters parameters) {
  impl_->start_cycle(std::move(routine), n_active, std::move(parameters));
}
void ThreadTeam::increase_thread_count(unsigned n) { impl_->increase_thread_count(n); }
void ThreadTeam::enqueue(std::shared_ptr<DataItem> item) { impl_->enqueue(std::move(item)); }
void ThreadTeam::enqueue(std::vector<std::shared_ptr<DataItem>> items) { impl_->enqueue(std::move(items)); }
void ThreadTeam::close_queue() { impl_->close_queue(); }
void ThreadTeam::wait() { impl_->wait(); }

void ThreadTeam::attach_work_subscriber(ThreadTeam& subscriber) { impl_->attach_work_subscriber(*subscriber.impl_); }
void ThreadTeam::detach_work_subscriber() { impl_->detach_work_subscriber(); }
void ThreadTeam::attach_thread_subscriber(ThreadTeam& subscriber) {
  impl_->attach_thread_subscriber(*subscriber.impl_);
}
void ThreadTeam::detach_thread_subscriber() { impl_->detach_thread_subscriber(); }
void ThreadTeam::add_external_work_publisher() { impl_->add_external_work_publisher(); }
void ThreadTeam::remove_external_work_publisher() { impl_->remove_external_work_publisher(); }

TeamMode ThreadTeam::mode() const { return impl_->mode(); }
TeamSnapshot ThreadTeam::snapshot() const { return impl_->snapshot(); }
CycleReport ThreadTeam::last_cycle() const { return impl_->last_cycle(); }
void ThreadTeam::rename(std::string name) { impl_->rename(std::move(name)); }
void ThreadTeam::set_transition_observer(TransitionObserver observer) {
  impl_->set_transition_observer(std::move(observer));
}

// ---------------------------------------------------------------------------------------------
// Construction and destruction

ThreadTeam::Impl::Impl(ThreadTeam& self, std::string name, unsigned n_max, TeamOptions options)
    : self_(self),
      name_(excerpt(name)),  // every message quotes it: bounded whatever the caller gave
      id_(next_team_id.fetch_add(1, std::memory_order_relaxed)),
      n_max_(n_max),
      options_(options),
      shared_mutex_(std::make_shared<std::mutex>()),
      mutex_(*shared_mutex_),
      queue_(std::make_unique<ItemRing>()) {
  if (n_max_ == 0) {
    throw Error::format("team '{}': a thread team needs at least 1 thread, N_max = 0 was given", name_);
  }
  if (options_.spin.count() < 0 || options_.contended_nap.count() < 0) {
    throw Error::format("team '{}': TeamOptions::{} is {} us, a negative time; give 0 (off) or a positive limit", name_,
                        options_.spin.count() < 0 ? "spin" : "contended_nap",
                        options_.spin.count() < 0 ? options_.spin.count() : options_.contended_nap.count());
  }
  if (!compat::is_initialized()) {
    throw Error::format(
        "team '{}': Kokkos is not initialized: call Kokkos::initialize before creating thread teams "
        "(each team thread owns Kokkos execution-space instances)",
        name_);
  }
  waiter_spin_budget_ = options_.spin;
  workers_.reserve(n_max_);
  for (unsigned i = 0; i < n_max_; ++i) {
    workers_.push_back(std::make_shared<Worker>(i, options_.spin, &self_));
    workers_.back()->queued = queue_->size_hint();
  }
  idle_parked_.reserve(n_max_);
  waiting_parked_.reserve(n_max_);
  activated_in_place_.reserve(n_max_);
  waiting_in_place_.reserve(n_max_);
  // The initial state: Idle, all threads Idle and waiting for activateThread, empty queue.
  // Thread 0 is on top of the stack, so it is the first one activated.
  for (unsigned i = n_max_; i-- > 0;) idle_parked_.push_back(workers_[i].get());
  n_idle_ = n_max_;

  for (auto& w : workers_) {
    try {
      // The thread owns its Worker and the mutex too: see ~ThreadTeam.
      w->thread = std::thread([this, worker = w, mutex = shared_mutex_] { worker_main(*worker, *mutex); });
    } catch (const std::system_error& e) {
      {
        std::lock_guard<std::mutex> lk(mutex_);
        terminating_ = true;
        for (auto& v : workers_) v->signal.store(Worker::terminate, std::memory_order_relaxed);
      }
      for (auto& v : workers_) {
        v->cv.notify_one();
        if (v->thread.joinable()) v->thread.join();
      }
      throw Error::format("team '{}': could not start thread {} of {}: {}", name_, w->index, n_max_, e.what());
    }
  }
}

ThreadTeam::Impl::~Impl() {
  // A routine of this team may destroy it, on a team thread or on the caller in wait() that runs
  // it. That thread cannot be joined; it is detached, and the frames below the routine leave
  // without touching the team (docs/thread-team.md, "Failures").
  detail::RoutineFrame* const own_routine = detail::routine_frame_of(this);
  const std::thread::id this_thread = std::this_thread::get_id();
  bool waiter_destroys = false;                  // the caller in wait() runs the routine that destroys the team
  std::vector<char> parked(workers_.size(), 0);  // Worker::parked when terminated
  {
    std::unique_lock<std::mutex> lk(mutex_);
    // A caller outside the team may be delivering the outputs of an Idle transition.
    wait_until(lk, [this] { return !finishing_; });
    terminating_ = true;
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      workers_[i]->signal.store(Worker::terminate, std::memory_order_release);
      parked[i] = workers_[i]->parked;
    }
    if (waiter_ != nullptr) {
      waiter_destroys = own_routine != nullptr &&
                        std::none_of(workers_.begin(), workers_.end(),
                                     [this_thread](const auto& w) { return w->thread.get_id() == this_thread; });
      waiter_->error = std::make_exception_ptr(
          own_routine != nullptr
              ? Error::format("team '{}' was destroyed by its own action routine '{}' in cycle {}: a routine must "
                              "not destroy its team; destroy it from outside, after wait()",
                              name_, routine_.name(), cycle_)
              : Error::format("team '{}' was destroyed in cycle {} while a thread was blocked in wait()", name_,
                              cycle_));
      waiter_->team_destroyed_by_caller = waiter_destroys;
      waiter_->done = true;
      waiter_->done_hint.store(true, std::memory_order_release);
      waiter_ = nullptr;
    }
    if (own_routine != nullptr) own_routine->team_destroyed = true;
    done_cv_.notify_all();
  }
  // Parked threads (asleep, polling, or not started yet) are not waited for: each finds its terminate
  // signal under the shared mutex and returns without touching the team (park). Joining them would
  // cost a scheduling delay per team on a loaded machine, for threads that have nothing left to do.
  for (auto& w : workers_) w->cv.notify_one();
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    Worker& w = *workers_[i];
    if (!w.thread.joinable()) continue;
    if (w.thread.get_id() == this_thread) {
      w.thread.detach();  // its routine destroys the team; it ends when that routine returns
    } else if (parked[i]) {
      w.thread.detach();
    } else {
      w.thread.join();
    }
  }
  {
    std::lock_guard<std::mutex> lk(mutex_);
    report_.skipped += queue_->size();
    queue_->clear();
  }
  unlink_on_destruction();
  // Callers still inside this team (a released waiter, a caller delivering outputs) leave first.
  std::unique_lock<std::mutex> lk(mutex_);
  // A routine that destroys its team still counts where its thread entered it.
  const unsigned own_blocked = waiter_destroys ? 1U : 0U;
  const unsigned own_outbound = own_routine != nullptr && own_routine->holds_outbound ? 1U : 0U;
  ++n_blocked_;
  done_cv_.wait(lk, [&] { return n_blocked_ == 1 + own_blocked && outbound_ == own_outbound && !finishing_; });
  --n_blocked_;
  // The routine is still running on this thread; every other thread that ran it (team threads,
  // a caller working in wait()) has left.
  if (own_routine != nullptr) own_routine->keep_alive = std::move(routine_);
  // A thread not waited for may end after Kokkos is finalized: its execution-space instances go now
  // (no one runs items as it any more: callers standing in for it have left above).
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    if (parked[i]) workers_[i]->spaces.reset();
  }
}

// Removes every link with other teams. A subscriber that still expects this team's close_queue in
// its running cycle gets it, so that it does not hang; a publisher stops using this team only after
// its calls into it have returned.
void ThreadTeam::Impl::unlink_on_destruction() {
  std::lock_guard<std::mutex> topology(topology_mutex());
  ThreadTeam::Impl* work_subscriber = nullptr;
  ThreadTeam::Impl* thread_subscriber = nullptr;
  std::vector<PublisherLink> work_publishers;
  std::vector<ThreadTeam::Impl*> thread_publishers;
  {
    std::lock_guard<std::mutex> lk(mutex_);
    work_subscriber = std::exchange(work_subscriber_, nullptr);
    thread_subscriber = std::exchange(thread_subscriber_, nullptr);
    work_publishers.swap(work_publishers_);
    thread_publishers.swap(thread_publishers_);
  }
  if (work_subscriber != nullptr) {
    ThreadTeam::Impl& sub = *work_subscriber;
    WakeList wake;
    std::unique_lock<std::mutex> lk(sub.mutex_);
    auto link = std::find_if(sub.work_publishers_.begin(), sub.work_publishers_.end(),
                             [this](const PublisherLink& l) { return l.team == this; });
    if (link != sub.work_publishers_.end()) {
      const bool closed = link->closed;
      sub.work_publishers_.erase(link);
      if (!closed && sub.mode_ == TeamMode::RunningOpen && !sub.terminating_ && sub.publisher_closes_pending_ > 0) {
        --sub.publisher_closes_pending_;
        sub.after_close(lk, TeamEvent::publisher_closed, -1, wake);
      }
    }
    lk.unlock();
    wake.notify();
  }
  if (thread_subscriber != nullptr) {
    ThreadTeam::Impl& sub = *thread_subscriber;
    std::lock_guard<std::mutex> lk(sub.mutex_);
    auto& pubs = sub.thread_publishers_;
    pubs.erase(std::remove(pubs.begin(), pubs.end(), this), pubs.end());
  }
  for (const PublisherLink& link : work_publishers) {
    ThreadTeam::Impl& pub = *link.team;
    std::unique_lock<std::mutex> lk(pub.mutex_);
    if (pub.work_subscriber_ == this) pub.work_subscriber_ = nullptr;
    pub.wait_until(lk, [&pub] { return pub.outbound_ == 0; });
  }
  for (ThreadTeam::Impl* p : thread_publishers) {
    ThreadTeam::Impl& pub = *p;
    std::unique_lock<std::mutex> lk(pub.mutex_);
    if (pub.thread_subscriber_ == this) pub.thread_subscriber_ = nullptr;
    pub.wait_until(lk, [&pub] { return pub.outbound_ == 0; });
  }
}

}  // namespace korch
