// ThreadTeam implementation. Read thread_team.hpp first.
//
// Implementation notes
//  * One mutex (mutex_) guards every EFSM variable. Each event is one critical section that leaves
//    the counters consistent (N_i + N_w + N_c == N_max); the observer sees that state.
//  * Events to threads (activateThread, transitionThread, termination) are delivered directly: the
//    sender pops a parked thread from idle_parked_ / waiting_parked_ and sets that thread's signal
//    under the mutex, so exactly the threads that are really waiting get an event (no notify storm,
//    no lost wake-up), and notifies its condition variable after unlocking, and only if the thread is
//    asleep. A thread polls its signal for TeamOptions::spin before it sleeps (at most one poller
//    per hardware thread in the process; polling yields the core after 2 us).
//  * At most one transitionThread is in flight while items are queued; the thread that receives it
//    and takes an item passes it on when more items and Waiting threads remain (wake chaining).
//  * Calls into other teams (items, threads and close to subscribers) are made without holding
//    mutex_, so teams can publish to each other in any acyclic pattern without lock-order deadlock.
//    outbound_ counts such calls in flight; a cycle is only declared finished, and a subscriber only
//    destroyed, once they have returned.
//  * The transition to Idle sets mode_ = Idle with finishing_ = true, delivers its outputs (threads to
//    the thread subscriber, close to the work subscriber) and only then releases wait(). start_cycle,
//    attach and detach wait for (or refuse) a team that is still finishing.
#include <korch/thread_team.hpp>

#include <korch/backend/kokkos_compat.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/cpu_relax.hpp>
#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cassert>
#include <chrono>
#include <system_error>
#include <thread>
#include <utility>

namespace korch {

namespace {

std::atomic<unsigned> next_team_id{0};

// Threads of all teams (and callers in wait()) that are polling right now. Polling only pays while
// a core is free for it, so at most one poller per hardware thread; the others sleep at once (and
// pollers yield their core after 2 us, see spin_until). Process-wide by nature: the cores are shared
// by every team.
std::atomic<int> polling_threads{0};
const int max_polling_threads = [] {
  const unsigned hw = std::thread::hardware_concurrency();
  return hw > 0 ? static_cast<int>(hw) : 1;
}();

class PollingSlot {
 public:
  // Takes a slot if one is free, or frees up within `grace` (checked between yields). The grace
  // matters at the end of a cycle: the last team thread releases the caller blocked in wait(), and
  // finds the slots full only because that caller has not yet left its poll; without the grace it
  // would go to sleep and cost a wake-up at the start of the next cycle.
  explicit PollingSlot(std::chrono::microseconds grace) : held_(try_take()) {
    if (held_ || grace.count() <= 0) return;
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (!held_ && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
      held_ = try_take();
    }
  }
  ~PollingSlot() {
    if (held_) polling_threads.fetch_sub(1, std::memory_order_relaxed);
  }
  PollingSlot(const PollingSlot&) = delete;
  PollingSlot& operator=(const PollingSlot&) = delete;
  explicit operator bool() const noexcept { return held_; }

 private:
  static bool try_take() noexcept {
    if (polling_threads.fetch_add(1, std::memory_order_relaxed) < max_polling_threads) return true;
    polling_threads.fetch_sub(1, std::memory_order_relaxed);
    return false;
  }
  bool held_;
};

// Polls `ready` for at most `budget` if a polling slot is free; true when it became ready.
// The first microseconds spin on the core; after that each poll yields, so that a thread with work
// to do that shares the core runs first (polling then costs nothing when cores are oversubscribed).
template <class Ready>
bool spin_until(std::chrono::microseconds budget, Ready&& ready) {
  if (budget.count() <= 0) return false;
  const PollingSlot slot(std::min(budget, std::chrono::microseconds(10)));
  if (!slot) return false;
  const auto start = std::chrono::steady_clock::now();
  const auto hot_until = start + std::min(budget, std::chrono::microseconds(2));
  const auto deadline = start + budget;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    if ((i & 15U) != 0) {
      cpu_relax();
      continue;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return ready();
    if (now >= hot_until) std::this_thread::yield();
  }
}

// Critical sections are a few dozen instructions: a contended lock is usually free again within
// a few hundred cycles, so try briefly before sleeping in the kernel.
inline void lock_briefly_spinning(std::unique_lock<std::mutex>& lk) {
  for (int i = 0; i < 32; ++i) {
    if (lk.try_lock()) return;
    cpu_relax();
  }
  lk.lock();
}

std::string describe_item(const DataItem& item) {
  try {
    return item.describe();
  } catch (...) {
    return "<an item whose describe() threw>";
  }
}

std::string what_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

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

// ---------------------------------------------------------------------------------------------
// Private helper types

struct ThreadTeam::Worker {
  enum Signal : int { none = 0, activate = 1, transition = 2, terminate = 3 };

  explicit Worker(unsigned i) : index(i) {}

  const unsigned index;
  // Written only under the team mutex; read under it, or polled (acquire) by the owning thread.
  std::atomic<int> signal{none};
  bool sleeping = false;  // in cv.wait (guarded by the team mutex)
  std::condition_variable cv;
  ThreadSpaces spaces;
  std::thread thread;
};

// The pending-work queue: a power-of-two ring of shared_ptrs that only ever grows, so that the
// steady state enqueues and dequeues without allocating.
class ThreadTeam::ItemRing {
 public:
  ItemRing() : slots_(64) {}

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }

  void push(std::shared_ptr<DataItem>&& item) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(item);
    ++size_;
  }

  std::shared_ptr<DataItem> pop() noexcept {
    std::shared_ptr<DataItem> item = std::move(slots_[head_]);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    return item;
  }

  void clear() noexcept {
    while (!empty()) pop();
  }

 private:
  void grow() {
    std::vector<std::shared_ptr<DataItem>> bigger(slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<std::shared_ptr<DataItem>> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

// The one caller blocked in wait(): the Idle transition hands it the cycle's result.
struct ThreadTeam::WaitSlot {
  bool done = false;
  std::exception_ptr error;
  std::atomic<bool> done_hint{false};  // polled while spinning
};

// Threads to notify once the mutex is released (only those that are asleep).
struct ThreadTeam::WakeList {
  std::array<Worker*, 8> few{};
  std::vector<Worker*> more;
  std::size_t n = 0;

  void add(Worker* w) {
    if (n < few.size()) {
      few[n++] = w;
    } else {
      more.push_back(w);
    }
  }
  void notify() {
    for (std::size_t i = 0; i < n; ++i) few[i]->cv.notify_one();
    for (Worker* w : more) w->cv.notify_one();
  }
};

std::mutex& ThreadTeam::topology_mutex() {
  static std::mutex m;
  return m;
}

// ---------------------------------------------------------------------------------------------
// Construction and destruction

ThreadTeam::ThreadTeam(std::string name, unsigned n_max, TeamOptions options)
    : name_(std::move(name)),
      id_(next_team_id.fetch_add(1, std::memory_order_relaxed)),
      n_max_(n_max),
      options_(options),
      queue_(std::make_unique<ItemRing>()) {
  if (n_max_ == 0) {
    throw Error::format("team '{}': a thread team needs at least 1 thread, N_max = 0 was given", name_);
  }
  if (!compat::is_initialized()) {
    throw Error::format(
        "team '{}': Kokkos is not initialized: call Kokkos::initialize before creating thread teams "
        "(each team thread owns Kokkos execution-space instances)",
        name_);
  }
  workers_.reserve(n_max_);
  for (unsigned i = 0; i < n_max_; ++i) workers_.push_back(std::make_unique<Worker>(i));
  idle_parked_.reserve(n_max_);
  waiting_parked_.reserve(n_max_);
  // The initial state: Idle, all threads Idle and waiting for activateThread, empty queue.
  // Thread 0 is on top of the stack, so it is the first one activated.
  for (unsigned i = n_max_; i-- > 0;) idle_parked_.push_back(workers_[i].get());
  n_idle_ = n_max_;

  for (auto& w : workers_) {
    try {
      Worker* const worker = w.get();
      w->thread = std::thread([this, worker] { worker_main(*worker); });
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
      throw Error::format("team '{}': could not start thread {} of {}: {}", name_, w->index, n_max_,
                          e.what());
    }
  }
}

ThreadTeam::~ThreadTeam() {
  {
    std::unique_lock<std::mutex> lk(mutex_);
    // A caller outside the team may be delivering the outputs of an Idle transition.
    wait_until(lk, [this] { return !finishing_; });
    terminating_ = true;
    for (auto& w : workers_) w->signal.store(Worker::terminate, std::memory_order_release);
    if (waiter_ != nullptr) {
      waiter_->error = std::make_exception_ptr(Error::format(
          "team '{}' was destroyed in cycle {} while a thread was blocked in wait()", name_, cycle_));
      waiter_->done = true;
      waiter_->done_hint.store(true, std::memory_order_release);
      waiter_ = nullptr;
    }
    done_cv_.notify_all();
  }
  for (auto& w : workers_) w->cv.notify_one();
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
  {
    std::lock_guard<std::mutex> lk(mutex_);
    report_.skipped += queue_->size();
    queue_->clear();
  }
  unlink_on_destruction();
  // Callers still inside this team (a released waiter, a caller delivering outputs) leave first.
  std::unique_lock<std::mutex> lk(mutex_);
  ++n_blocked_;
  done_cv_.wait(lk, [this] { return n_blocked_ == 1 && outbound_ == 0 && !finishing_; });
  --n_blocked_;
}

// Removes every link with other teams. A subscriber that still expects this team's close_queue in
// its running cycle gets it, so that it does not hang; a publisher stops using this team only after
// its calls into it have returned.
void ThreadTeam::unlink_on_destruction() {
  std::lock_guard<std::mutex> topology(topology_mutex());
  ThreadTeam* work_subscriber = nullptr;
  ThreadTeam* thread_subscriber = nullptr;
  std::vector<PublisherLink> work_publishers;
  std::vector<ThreadTeam*> thread_publishers;
  {
    std::lock_guard<std::mutex> lk(mutex_);
    work_subscriber = std::exchange(work_subscriber_, nullptr);
    thread_subscriber = std::exchange(thread_subscriber_, nullptr);
    work_publishers.swap(work_publishers_);
    thread_publishers.swap(thread_publishers_);
  }
  if (work_subscriber != nullptr) {
    ThreadTeam& sub = *work_subscriber;
    WakeList wake;
    std::unique_lock<std::mutex> lk(sub.mutex_);
    auto link = std::find_if(sub.work_publishers_.begin(), sub.work_publishers_.end(),
                             [this](const PublisherLink& l) { return l.team == this; });
    if (link != sub.work_publishers_.end()) {
      const bool closed = link->closed;
      sub.work_publishers_.erase(link);
      if (!closed && sub.mode_ == TeamMode::RunningOpen && !sub.terminating_ &&
          sub.publisher_closes_pending_ > 0) {
        --sub.publisher_closes_pending_;
        sub.after_close(lk, TeamEvent::publisher_closed, -1, wake);
      }
    }
    lk.unlock();
    wake.notify();
  }
  if (thread_subscriber != nullptr) {
    ThreadTeam& sub = *thread_subscriber;
    std::lock_guard<std::mutex> lk(sub.mutex_);
    auto& pubs = sub.thread_publishers_;
    pubs.erase(std::remove(pubs.begin(), pubs.end(), this), pubs.end());
  }
  for (const PublisherLink& link : work_publishers) {
    ThreadTeam& pub = *link.team;
    std::unique_lock<std::mutex> lk(pub.mutex_);
    if (pub.work_subscriber_ == this) pub.work_subscriber_ = nullptr;
    pub.wait_until(lk, [&pub] { return pub.outbound_ == 0; });
  }
  for (ThreadTeam* p : thread_publishers) {
    ThreadTeam& pub = *p;
    std::unique_lock<std::mutex> lk(pub.mutex_);
    if (pub.thread_subscriber_ == this) pub.thread_subscriber_ = nullptr;
    pub.wait_until(lk, [&pub] { return pub.outbound_ == 0; });
  }
}

// ---------------------------------------------------------------------------------------------
// Team threads

void ThreadTeam::park(Worker& w, std::unique_lock<std::mutex>& lk) {
  if (w.signal.load(std::memory_order_relaxed) != Worker::none) return;
  if (options_.spin.count() > 0) {
    lk.unlock();
    spin_until(options_.spin,
               [&w] { return w.signal.load(std::memory_order_acquire) != Worker::none; });
    lock_briefly_spinning(lk);
  }
  while (w.signal.load(std::memory_order_relaxed) == Worker::none) {
    w.sleeping = true;
    w.cv.wait(lk);
    w.sleeping = false;
  }
}

namespace {
thread_local const ThreadTeam* team_of_this_thread = nullptr;
}  // namespace

const ThreadTeam* ThreadTeam::current() noexcept { return team_of_this_thread; }

void ThreadTeam::worker_main(Worker& w) {
  team_of_this_thread = this;
  std::unique_lock<std::mutex> lk(mutex_, std::defer_lock);
  lock_briefly_spinning(lk);
  for (;;) {
    park(w, lk);  // Idle threads wait for activateThread, Waiting threads for transitionThread
    const int signal = w.signal.exchange(Worker::none, std::memory_order_relaxed);
    if (signal == Worker::terminate || terminating_) return;
    if (signal == Worker::activate) {
      --n_to_activate_;
      if (mode_ == TeamMode::RunningOpen || mode_ == TeamMode::RunningClosed) {
        --n_idle_;
        ++n_computing_;  // until it finds out whether there is work (same critical section)
        if (run_items(w, lk, TeamEvent::activate_thread)) return;
      } else {
        // An activation the team no longer needs (RunningNoMoreWork): stay Idle and hand the
        // thread on to the thread subscriber (Spec IdleToIdle).
        idle_parked_.push_back(&w);
        observe(TeamEvent::activate_thread, static_cast<int>(w.index));
        forward_threads(lk, 1, true);
      }
    } else {  // transitionThread
      --transitions_in_flight_;
      --n_waiting_;
      ++n_computing_;
      if (run_items(w, lk, TeamEvent::transition_thread)) return;
    }
  }
}

// Entered counted as Computing, with the mutex held. Applies the routine to queued items until
// there are none, then leaves the thread Waiting (RunningOpen) or Idle (RunningNoMoreWork).
// Returns true when the thread must end (the team is being destroyed).
bool ThreadTeam::run_items(Worker& w, std::unique_lock<std::mutex>& lk, TeamEvent event) {
  const ActionContext context(id_, name_, w.index, cycle_, w.spaces, parameters_);
  const int thread = static_cast<int>(w.index);
  for (;;) {
    if (terminating_) return true;
    if (!queue_->empty()) {
      std::shared_ptr<DataItem> item = queue_->pop();
      WakeList wake;
      if (mode_ == TeamMode::RunningClosed && queue_->empty()) {
        // Spec Closed_Transition: dequeuing the last item ends RunningClosed in the same transition.
        mode_ = TeamMode::RunningNoMoreWork;
        wake_all_waiting(wake);  // Spec AwakenOnNoMoreWork
      } else if (!queue_->empty() && transitions_in_flight_ == 0 && !waiting_parked_.empty()) {
        wake_one_waiting(wake);  // more work than this thread: pass transitionThread on
      }
      const bool skip = cycle_failed_;
      ThreadTeam* const subscriber = skip ? nullptr : work_subscriber_;
      if (subscriber != nullptr) ++outbound_;
      observe(event, thread);
      lk.unlock();
      wake.notify();

      std::exception_ptr thrown;
      std::string failure;
      if (!skip) {
        try {
          routine_(context, *item);
        } catch (...) {
          thrown = std::current_exception();
          failure = fmt::format("team '{}' (id {}), cycle {}: action routine '{}' threw on item {} (thread {}): {}",
                                name_, id_, context.cycle(), routine_.name(), describe_item(*item),
                                w.index, what_of(thrown));
        }
      }
      // Spec CompMustEnqueue: the finished item goes to the work subscriber.
      std::string refused;
      if (subscriber != nullptr && !thrown) refused = subscriber->receive_item(item, *this);
      item.reset();

      lock_briefly_spinning(lk);
      if (subscriber != nullptr) release_outbound();
      if (skip) {
        ++report_.skipped;
      } else if (thrown) {
        ++report_.failed;
        record_error(std::move(failure), thrown);
      } else {
        ++report_.processed;
        if (subscriber != nullptr) {
          if (refused.empty()) {
            ++report_.forwarded;
          } else {
            ++report_.undelivered;
            record_error(std::move(refused), nullptr);
          }
        }
      }
      event = TeamEvent::computation_finished;
      continue;
    }
    if (mode_ == TeamMode::RunningOpen) {
      --n_computing_;
      ++n_waiting_;
      waiting_parked_.push_back(&w);
      observe(event, thread);
      return false;
    }
    // RunningNoMoreWork (RunningClosed never holds an empty queue).
    assert(mode_ == TeamMode::RunningNoMoreWork);
    go_idle(w, lk, event);
    return terminating_;
  }
}

// A Computing thread found no more work in RunningNoMoreWork and becomes Idle.
void ThreadTeam::go_idle(Worker& w, std::unique_lock<std::mutex>& lk, TeamEvent event) {
  // Spec ForwardThreads, while still counted as Computing, so that the last thread to become
  // Idle is the last to have delivered its outputs.
  forward_threads(lk, 1, true);
  if (terminating_) return;
  --n_computing_;
  ++n_idle_;
  idle_parked_.push_back(&w);
  if (n_computing_ == 0 && n_waiting_ == 0) {
    finish_cycle(lk, event, static_cast<int>(w.index));  // Spec NoMoreWork_TransitionToIdle
  } else {
    observe(event, static_cast<int>(w.index));
  }
}

// ---------------------------------------------------------------------------------------------
// Transitions shared by several events (mutex held)

// A parked thread that is still polling takes an event without a system call; prefer it.
ThreadTeam::Worker* ThreadTeam::pop_preferring_awake(std::vector<Worker*>& parked) {
  if (parked.back()->sleeping) {
    for (std::size_t i = parked.size() - 1; i-- > 0;) {
      if (!parked[i]->sleeping) {
        std::swap(parked[i], parked.back());
        break;
      }
    }
  }
  Worker* const w = parked.back();
  parked.pop_back();
  return w;
}

void ThreadTeam::activate(unsigned n, WakeList& wake) {
  assert(n <= idle_parked_.size());
  for (unsigned i = 0; i < n; ++i) {
    Worker* const w = pop_preferring_awake(idle_parked_);
    w->signal.store(Worker::activate, std::memory_order_release);
    ++n_to_activate_;
    if (w->sleeping) wake.add(w);
  }
}

void ThreadTeam::wake_all_waiting(WakeList& wake) {
  for (Worker* w : waiting_parked_) {
    w->signal.store(Worker::transition, std::memory_order_release);
    ++transitions_in_flight_;
    if (w->sleeping) wake.add(w);
  }
  waiting_parked_.clear();
}

// transitionThread to one Waiting thread. At most one is in flight while items are queued: a thread
// that receives it and takes an item passes it on if more items wait (see run_items), so threads are
// woken as fast as there is work for them, and never in a herd that finds the queue empty.
void ThreadTeam::wake_one_waiting(WakeList& wake) {
  Worker* const w = pop_preferring_awake(waiting_parked_);
  w->signal.store(Worker::transition, std::memory_order_release);
  ++transitions_in_flight_;
  if (w->sleeping) wake.add(w);
}

// Hands n threads to the thread subscriber, if there is one. Releases the mutex for the call.
void ThreadTeam::forward_threads(std::unique_lock<std::mutex>& lk, unsigned n, bool count_in_report) {
  ThreadTeam* const subscriber = thread_subscriber_;
  if (subscriber == nullptr || n == 0) return;
  if (count_in_report) report_.threads_forwarded += n;
  ++outbound_;
  lk.unlock();
  subscriber->receive_threads(n, *this);
  lk.lock();
  release_outbound();
}

void ThreadTeam::release_outbound() {
  if (--outbound_ == 0 && n_blocked_ > 0) done_cv_.notify_all();
}

void ThreadTeam::wait_until(std::unique_lock<std::mutex>& lk, const std::function<bool()>& done) {
  ++n_blocked_;
  done_cv_.wait(lk, done);
  --n_blocked_;
  if (terminating_) done_cv_.notify_all();  // the destructor waits for everyone to leave
}

// RunningOpen after a close arrived: leave RunningOpen once every publisher has closed.
void ThreadTeam::after_close(std::unique_lock<std::mutex>& lk, TeamEvent event, int thread, WakeList& wake) {
  if (publisher_closes_pending_ + external_closes_pending_ > 0) {
    observe(event, thread);
  } else if (!queue_->empty()) {
    mode_ = TeamMode::RunningClosed;
    observe(event, thread);
  } else if (n_waiting_ + n_computing_ > 0) {
    mode_ = TeamMode::RunningNoMoreWork;
    wake_all_waiting(wake);
    observe(event, thread);
  } else {
    finish_cycle(lk, event, thread);  // no thread is active: straight to Idle
  }
}

// The transition to Idle: all threads Idle, queue empty. Delivers the outputs (Spec IdleOutput)
// and then releases the waiter. Releases the mutex while calling other teams.
void ThreadTeam::finish_cycle(std::unique_lock<std::mutex>& lk, TeamEvent event, int thread) {
  assert(n_idle_ == n_max_ && queue_->empty());
  // Activations still in flight are not needed any more. Take them back and hand those threads on
  // now, as each would on receiving its activateThread in Idle (Spec IdleToIdle); this way Idle
  // never has activations in flight and the next start_cycle can use every thread.
  unsigned revoked = 0;
  if (n_to_activate_ > 0) {
    for (auto& w : workers_) {
      if (w->signal.load(std::memory_order_relaxed) == Worker::activate) {
        w->signal.store(Worker::none, std::memory_order_relaxed);
        idle_parked_.push_back(w.get());
        --n_to_activate_;
        ++revoked;
      }
    }
  }
  mode_ = TeamMode::Idle;
  finishing_ = true;
  observe(event, thread);

  forward_threads(lk, revoked, true);
  if (ThreadTeam* const subscriber = work_subscriber_) {
    // The finishing thread's own item went out before it became Idle; now close the subscriber.
    ++outbound_;
    lk.unlock();
    std::string refused = subscriber->receive_close(*this);
    lk.lock();
    release_outbound();
    if (!refused.empty()) record_error(std::move(refused), nullptr);
  }
  // Threads of this team that are still handing themselves on finish first.
  wait_until(lk, [this] { return outbound_ == 0; });
  finishing_ = false;

  std::exception_ptr error;
  if (report_.errors > 0) {
    const std::string message = fmt::format(
        "{}. Cycle {} of team '{}' (routine '{}'): {} items enqueued, {} processed, {} failed, {} "
        "skipped, {} undelivered; {} error(s). The team is Idle and can start another cycle",
        report_.error, report_.cycle, name_, report_.routine, report_.enqueued, report_.processed,
        report_.failed, report_.skipped, report_.undelivered, report_.errors);
    if (first_cause_) {
      try {
        std::rethrow_exception(first_cause_);
      } catch (...) {
        try {
          std::throw_with_nested(Error(message));
        } catch (...) {
          error = std::current_exception();
        }
      }
    } else {
      error = std::make_exception_ptr(Error(message));
    }
    first_cause_ = nullptr;
  }
  last_report_ = report_;
  if (waiter_ != nullptr) {
    waiter_->error = error;
    waiter_->done = true;
    waiter_->done_hint.store(true, std::memory_order_release);
    waiter_ = nullptr;
  } else {
    pending_error_ = error;
  }
  observe(TeamEvent::cycle_finished, thread);
  if (n_blocked_ > 0) done_cv_.notify_all();
}

void ThreadTeam::record_error(std::string message, std::exception_ptr cause) {
  ++report_.errors;
  if (report_.errors == 1) {
    report_.error = std::move(message);
    first_cause_ = std::move(cause);
  }
  cycle_failed_ = true;
}

void ThreadTeam::observe(TeamEvent event, int thread) {
  if (!observer_) return;
  const TeamTransition t{event,       thread,         cycle_,         mode_,          n_idle_,
                         n_waiting_,  n_computing_,   n_to_activate_, queue_->size()};
  try {
    observer_(t);
  } catch (...) {
    record_error(fmt::format("team '{}': the transition observer threw: {}", name_,
                             what_of(std::current_exception())),
                 std::current_exception());
  }
}

std::string ThreadTeam::describe_state() const {
  return fmt::format("team '{}' is {} (cycle {}, N_max {}, N_i {}, N_w {}, N_c {}, N_Q {}, {} pending activation)",
                     name_, to_string(mode_), cycle_, n_max_, n_idle_, n_waiting_, n_computing_,
                     queue_->size(), n_to_activate_);
}

void ThreadTeam::require_quiescent_idle(const char* what) const {
  if (terminating_) throw Error::format("team '{}' is being destroyed: {} is not possible", name_, what);
  if (mode_ != TeamMode::Idle) {
    throw Error::format("{}: {} needs an Idle team; call wait() first", describe_state(), what);
  }
  if (finishing_ || outbound_ > 0) {
    throw Error::format("team '{}' is Idle but still delivering the outputs of cycle {}: {} needs "
                        "them delivered; call wait() first",
                        name_, cycle_, what);
  }
}

// ---------------------------------------------------------------------------------------------
// Public events

void ThreadTeam::start_cycle(ActionRoutine routine, unsigned n_active, ActionParameters parameters) {
  if (!routine) {
    throw Error::format("team '{}': start_cycle was given an empty action routine '{}': give it a function",
                        name_, routine.name());
  }
  WakeList wake;
  {
    std::unique_lock<std::mutex> lk(mutex_);
    if (terminating_) throw Error::format("team '{}' is being destroyed: start_cycle is not possible", name_);
    // The caller may have learned that the last cycle ended from a subscriber, while this team is
    // still delivering its final outputs: let it finish.
    if (mode_ == TeamMode::Idle) wait_until(lk, [this] { return (!finishing_ && outbound_ == 0) || terminating_; });
    if (mode_ != TeamMode::Idle) {
      throw Error::format("{}: start_cycle needs Idle; call wait() for cycle {} first", describe_state(), cycle_);
    }
    if (pending_error_) {
      throw Error::format("team '{}' is Idle, but cycle {} failed and its error has not been collected: call "
                          "wait() (it throws that error) before starting another cycle. The error: {}",
                          name_, cycle_, last_report_.error);
    }
    if (n_active > idle_parked_.size()) {
      throw Error::format("{}: start_cycle cannot activate {} threads; at most {} can be activated",
                          describe_state(), n_active, idle_parked_.size());
    }
    routine_ = std::move(routine);
    parameters_ = std::move(parameters);
    ++cycle_;
    report_ = CycleReport{};
    report_.cycle = cycle_;
    report_.routine = routine_.name();
    cycle_failed_ = false;
    first_cause_ = nullptr;
    for (PublisherLink& link : work_publishers_) link.closed = false;
    publisher_closes_pending_ = static_cast<unsigned>(work_publishers_.size());
    external_closes_pending_ = external_publishers_ > 0 ? external_publishers_ : (work_publishers_.empty() ? 1U : 0U);
    mode_ = TeamMode::RunningOpen;  // the mode changes before any thread is signalled
    activate(n_active, wake);
    observe(TeamEvent::start_cycle, -1);
  }
  wake.notify();
}

void ThreadTeam::increase_thread_count(unsigned n) {
  if (n == 0) return;
  WakeList wake;
  std::unique_lock<std::mutex> lk(mutex_);
  if (terminating_) throw Error::format("team '{}' is being destroyed: increase_thread_count is not possible", name_);
  if (mode_ == TeamMode::Idle) {
    // Spec: in Idle the threads go straight on to the thread subscriber.
    observe(TeamEvent::increase_thread_count, -1);
    forward_threads(lk, n, false);
    return;
  }
  if (n > idle_parked_.size()) {
    throw Error::format("{}: increase_thread_count({}) asks for more threads than are Idle and not already "
                        "pending activation ({}); a team may be given at most N_max threads in a cycle",
                        describe_state(), n, idle_parked_.size());
  }
  if (mode_ == TeamMode::RunningNoMoreWork) {
    observe(TeamEvent::increase_thread_count, -1);
    forward_threads(lk, n, true);  // no more work here: hand the threads on at once
    return;
  }
  activate(n, wake);
  observe(TeamEvent::increase_thread_count, -1);
  lk.unlock();
  wake.notify();
}

void ThreadTeam::receive_threads(unsigned n, const ThreadTeam& from) {
  WakeList wake;
  std::unique_lock<std::mutex> lk(mutex_);
  if (terminating_ || n == 0) return;
  if (mode_ == TeamMode::Idle) {
    observe(TeamEvent::threads_received, -1);
    forward_threads(lk, n, false);
    return;
  }
  if (n > idle_parked_.size()) {
    // Req ThreadBalance: the subscriber emits the error; it fails this cycle (wait() throws it).
    record_error(fmt::format("{}: thread publisher '{}' handed it {} thread(s), but only {} are Idle and not "
                             "pending activation (Req ThreadBalance): give the team more threads or start it "
                             "with fewer",
                             describe_state(), from.name_, n, idle_parked_.size()),
                 nullptr);
    observe(TeamEvent::threads_received, -1);
    return;
  }
  if (mode_ == TeamMode::RunningNoMoreWork) {
    observe(TeamEvent::threads_received, -1);
    forward_threads(lk, n, true);
    return;
  }
  activate(n, wake);
  observe(TeamEvent::threads_received, -1);
  lk.unlock();
  wake.notify();
}

void ThreadTeam::enqueue(std::shared_ptr<DataItem> item) {
  if (!item) throw Error::format("team '{}': enqueue was given a null item", name_);
  std::string refused = accept_item(item, Origin::external, "enqueue");
  if (!refused.empty()) throw Error(refused);
}

void ThreadTeam::enqueue(std::vector<std::shared_ptr<DataItem>> items) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!items[i]) {
      throw Error::format("team '{}': enqueue was given {} items, item {} is null: none was enqueued", name_,
                          items.size(), i);
    }
  }
  if (items.empty()) return;
  TeamMode mode;
  const std::string state = push_if_open(items.data(), items.size(), Origin::external, mode);
  if (!state.empty()) {
    throw Error(refusal(state, mode, *items.front(), Origin::external, "enqueue") +
                fmt::format(" (none of the {} items was enqueued)", items.size()));
  }
}

std::string ThreadTeam::receive_item(std::shared_ptr<DataItem>& item, const ThreadTeam& from) {
  return accept_item(item, Origin::publisher, from.name_.c_str());
}

// Queues the item (moving it out of `item`) or returns why not (leaving `item` alone).
std::string ThreadTeam::accept_item(std::shared_ptr<DataItem>& item, Origin origin, const char* caller) {
  TeamMode mode;
  const std::string state = push_if_open(&item, 1, origin, mode);
  return state.empty() ? state : refusal(state, mode, *item, origin, caller);
}

// In RunningOpen, queues the n items in order in one critical section and returns an empty string;
// otherwise leaves them alone and returns the state that refuses them (`mode` is the mode seen).
// When no transitionThread is in flight, one Waiting thread receives it (notified if it sleeps).
std::string ThreadTeam::push_if_open(std::shared_ptr<DataItem>* items, std::size_t n, Origin origin, TeamMode& mode) {
  Worker* wake = nullptr;
  {
    std::unique_lock<std::mutex> lk(mutex_, std::defer_lock);
    lock_briefly_spinning(lk);
    mode = mode_;
    if (mode_ != TeamMode::RunningOpen || terminating_) {
      return terminating_ ? fmt::format("team '{}' is being destroyed", name_) : describe_state();
    }
    for (std::size_t i = 0; i < n; ++i) {
      queue_->push(std::move(items[i]));
      ++report_.enqueued;
      if (transitions_in_flight_ == 0 && !waiting_parked_.empty()) {  // transitionThread to one Waiting thread
        Worker* const w = pop_preferring_awake(waiting_parked_);
        w->signal.store(Worker::transition, std::memory_order_release);
        ++transitions_in_flight_;
        if (w->sleeping) wake = w;  // else it is polling and will see the signal
      }
      observe(origin == Origin::external ? TeamEvent::enqueue : TeamEvent::item_received, -1);
    }
  }
  if (wake != nullptr) wake->cv.notify_one();
  return {};
}

std::string ThreadTeam::refusal(const std::string& state, TeamMode mode, const DataItem& item, Origin origin,
                                const char* caller) const {
  const char* fix = mode == TeamMode::Idle
                        ? "start its cycle first (start a subscriber's cycle before its publishers' cycles)"
                        : "items can only be given before its queue is closed";
  if (origin == Origin::external) {
    return fmt::format("{}: {} of item {} refused: items are accepted only in RunningOpen; {}", state, caller,
                       describe_item(item), fix);
  }
  return fmt::format("{}: it refused item {} from its work publisher '{}': items are accepted only in "
                     "RunningOpen; {}",
                     state, describe_item(item), caller, fix);
}

void ThreadTeam::close_queue() {
  WakeList wake;
  std::unique_lock<std::mutex> lk(mutex_);
  if (terminating_) throw Error::format("team '{}' is being destroyed: close_queue is not possible", name_);
  if (mode_ != TeamMode::RunningOpen) {
    throw Error::format("{}: close_queue needs RunningOpen; {}", describe_state(),
                        mode_ == TeamMode::Idle ? "start a cycle first (or the cycle has already ended)"
                                                : "the queue of this cycle is already closed");
  }
  if (external_closes_pending_ == 0) {
    if (external_publishers_ == 0) {
      throw Error::format("{}: its queue is closed by its {} work publisher team(s), so close_queue() from "
                          "other code is not expected; register such a feeder with add_external_work_publisher()",
                          describe_state(), work_publishers_.size());
    }
    throw Error::format("{}: all {} external work publishers have already called close_queue() this cycle",
                        describe_state(), external_publishers_);
  }
  --external_closes_pending_;
  after_close(lk, TeamEvent::close_queue, -1, wake);
  lk.unlock();
  wake.notify();
}

std::string ThreadTeam::receive_close(const ThreadTeam& from) {
  WakeList wake;
  std::unique_lock<std::mutex> lk(mutex_);
  if (terminating_) return fmt::format("team '{}' is being destroyed: work publisher '{}' could not close it", name_, from.name_);
  auto link = std::find_if(work_publishers_.begin(), work_publishers_.end(),
                           [&from](const PublisherLink& l) { return l.team == &from; });
  if (mode_ != TeamMode::RunningOpen || link == work_publishers_.end()) {
    return fmt::format("{}: its work publisher '{}' could not close its queue, which needs RunningOpen; start "
                       "a subscriber's cycle before its publishers' cycles",
                       describe_state(), from.name_);
  }
  if (link->closed) {
    return fmt::format("{}: work publisher '{}' closed its queue twice in one cycle", describe_state(), from.name_);
  }
  link->closed = true;
  --publisher_closes_pending_;
  after_close(lk, TeamEvent::publisher_closed, -1, wake);
  lk.unlock();
  wake.notify();
  return {};
}

void ThreadTeam::wait() {
  std::unique_lock<std::mutex> lk(mutex_);
  if (mode_ == TeamMode::Idle && !finishing_) {
    // The cycle may have ended before wait() was called (Spec: wait in Idle returns at once).
    if (pending_error_) std::rethrow_exception(std::exchange(pending_error_, nullptr));
    return;
  }
  if (terminating_) throw Error::format("team '{}' is being destroyed: wait() is not possible", name_);
  for (const auto& w : workers_) {
    if (w->thread.get_id() == std::this_thread::get_id()) {
      throw Error::format("{}: wait() was called by the team's own thread {} (from its action routine '{}'), "
                          "which would wait for itself forever; wait for a team from outside it",
                          describe_state(), w->index, routine_.name());
    }
  }
  if (waiter_ != nullptr) {
    throw Error::format("{}: another thread is already blocked in wait() for this cycle; at most one thread "
                        "may wait for a cycle",
                        describe_state());
  }
  WaitSlot slot;
  waiter_ = &slot;
  if (options_.spin.count() > 0) {
    lk.unlock();
    spin_until(options_.spin, [&slot] { return slot.done_hint.load(std::memory_order_acquire); });
    lock_briefly_spinning(lk);
  }
  wait_until(lk, [&slot] { return slot.done; });
  if (slot.error) std::rethrow_exception(slot.error);
}

// ---------------------------------------------------------------------------------------------
// Publishers and subscribers

void ThreadTeam::attach_work_subscriber(ThreadTeam& subscriber) {
  if (&subscriber == this) {
    throw Error::format("team '{}' cannot be its own work subscriber: a team never publishes to itself", name_);
  }
  std::lock_guard<std::mutex> topology(topology_mutex());
  std::scoped_lock both(mutex_, subscriber.mutex_);
  require_quiescent_idle("attach_work_subscriber");
  subscriber.require_quiescent_idle("becoming a work subscriber");
  if (work_subscriber_ != nullptr) {
    throw Error::format("team '{}' already has work subscriber '{}': a team has at most one; detach it first",
                        name_, work_subscriber_->name_);
  }
  // Every link change holds the topology mutex, so the chain can be followed under it alone.
  for (const ThreadTeam* t = &subscriber; t != nullptr; t = t->work_subscriber_) {
    if (t == this) {
      throw Error::format("team '{}' cannot publish work to '{}': '{}' already passes its items on to '{}', "
                          "and a cycle of work publishers would never close",
                          name_, subscriber.name_, subscriber.name_, name_);
    }
  }
  work_subscriber_ = &subscriber;
  subscriber.work_publishers_.push_back(PublisherLink{this, false});
}

void ThreadTeam::detach_work_subscriber() {
  std::lock_guard<std::mutex> topology(topology_mutex());
  ThreadTeam* const subscriber = work_subscriber_;
  if (subscriber == nullptr) return;
  std::scoped_lock both(mutex_, subscriber->mutex_);
  require_quiescent_idle("detach_work_subscriber");
  subscriber->require_quiescent_idle("losing a work publisher");
  auto& pubs = subscriber->work_publishers_;
  pubs.erase(std::remove_if(pubs.begin(), pubs.end(), [this](const PublisherLink& l) { return l.team == this; }),
             pubs.end());
  work_subscriber_ = nullptr;
}

void ThreadTeam::attach_thread_subscriber(ThreadTeam& subscriber) {
  if (&subscriber == this) {
    throw Error::format("team '{}' cannot be its own thread subscriber: a team never publishes to itself", name_);
  }
  std::lock_guard<std::mutex> topology(topology_mutex());
  std::scoped_lock both(mutex_, subscriber.mutex_);
  require_quiescent_idle("attach_thread_subscriber");
  subscriber.require_quiescent_idle("becoming a thread subscriber");
  if (thread_subscriber_ != nullptr) {
    throw Error::format("team '{}' already has thread subscriber '{}': a team has at most one; detach it first",
                        name_, thread_subscriber_->name_);
  }
  for (const ThreadTeam* t = &subscriber; t != nullptr; t = t->thread_subscriber_) {
    if (t == this) {
      throw Error::format("team '{}' cannot publish threads to '{}': '{}' already passes its threads on to '{}', "
                          "and threads would circle forever",
                          name_, subscriber.name_, subscriber.name_, name_);
    }
  }
  thread_subscriber_ = &subscriber;
  subscriber.thread_publishers_.push_back(this);
}

void ThreadTeam::detach_thread_subscriber() {
  std::lock_guard<std::mutex> topology(topology_mutex());
  ThreadTeam* const subscriber = thread_subscriber_;
  if (subscriber == nullptr) return;
  std::scoped_lock both(mutex_, subscriber->mutex_);
  require_quiescent_idle("detach_thread_subscriber");
  subscriber->require_quiescent_idle("losing a thread publisher");
  auto& pubs = subscriber->thread_publishers_;
  pubs.erase(std::remove(pubs.begin(), pubs.end(), this), pubs.end());
  thread_subscriber_ = nullptr;
}

void ThreadTeam::add_external_work_publisher() {
  std::lock_guard<std::mutex> lk(mutex_);
  require_quiescent_idle("add_external_work_publisher");
  ++external_publishers_;
}

void ThreadTeam::remove_external_work_publisher() {
  std::lock_guard<std::mutex> lk(mutex_);
  require_quiescent_idle("remove_external_work_publisher");
  if (external_publishers_ == 0) {
    throw Error::format("team '{}' has no external work publisher to remove", name_);
  }
  --external_publishers_;
}

// ---------------------------------------------------------------------------------------------
// Observation

TeamMode ThreadTeam::mode() const {
  std::lock_guard<std::mutex> lk(mutex_);
  return mode_;
}

TeamSnapshot ThreadTeam::snapshot() const {
  std::lock_guard<std::mutex> lk(mutex_);
  TeamSnapshot s;
  s.mode = mode_;
  s.n_max = n_max_;
  s.n_idle = n_idle_;
  s.n_waiting = n_waiting_;
  s.n_computing = n_computing_;
  s.n_to_activate = n_to_activate_;
  s.n_queued = queue_->size();
  s.finishing = finishing_;
  s.waiter_blocked = waiter_ != nullptr;
  s.closes_pending = mode_ == TeamMode::RunningOpen ? publisher_closes_pending_ + external_closes_pending_ : 0;
  s.work_publishers = static_cast<unsigned>(work_publishers_.size());
  s.external_work_publishers = external_publishers_;
  s.thread_publishers = static_cast<unsigned>(thread_publishers_.size());
  s.has_work_subscriber = work_subscriber_ != nullptr;
  s.has_thread_subscriber = thread_subscriber_ != nullptr;
  s.cycle = mode_ == TeamMode::Idle && !finishing_ ? last_report_ : report_;
  return s;
}

CycleReport ThreadTeam::last_cycle() const {
  std::lock_guard<std::mutex> lk(mutex_);
  return last_report_;
}

void ThreadTeam::set_transition_observer(TransitionObserver observer) {
  std::lock_guard<std::mutex> lk(mutex_);
  require_quiescent_idle("set_transition_observer");
  observer_ = std::move(observer);
}

}  // namespace korch
