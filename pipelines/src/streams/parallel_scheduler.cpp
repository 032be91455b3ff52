// The parallel executor's scheduler: spawning tasks to scheduler threads, the end and the failure
// of a run, and each thread's trampoline with its idle handling (spin, then sleep).
#include "parallel_internals.hpp"

#include <korch/cpu_relax.hpp>
#include <korch/error.hpp>

#include <thread>

namespace korch::streams::detail {

Scheduler::Scheduler(const Layout& layout, const ParallelOptions& options) : layout_(layout), options_(options) {
  for (unsigned i = 0; i < layout.threads(); ++i) threads_.push_back(std::make_unique<SchedulerThread>());
  busy_seconds.assign(layout.threads(), 0.0);
}

void Scheduler::spawn(unsigned thread, std::unique_ptr<Task> task) {
  live_.fetch_add(1, std::memory_order_acq_rel);
  tasks_run_.fetch_add(1, std::memory_order_relaxed);
  SchedulerThread& target = *threads_[thread % threads_.size()];
  {
    std::lock_guard<std::mutex> g(target.mutex);
    target.inbox.push_back(std::move(task));
    target.has_inbox.store(true, std::memory_order_release);
  }
  target.wake.notify_one();  // the thread had no tasks and sleeps
  wake_parked();             // the thread's tasks are blocked and it sleeps
}

void Scheduler::wake_empty_threads() {
  for (auto& thread : threads_) {
    { std::lock_guard<std::mutex> g(thread->mutex); }  // the sleeper is waiting or will see the change
    thread->wake.notify_all();
  }
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

std::exception_ptr Scheduler::error() {
  std::lock_guard<std::mutex> g(error_mutex_);
  return error_;
}

// ---------------------------------------------------------------------------------------------
// One scheduler thread's trampoline
//
// Idle handling: a thread whose sweeps find nothing to do polls for options.idle_spin. Then a
// thread with no tasks sleeps on its own condition variable until a task is spawned to it or the
// run ends. A thread whose tasks are all blocked arms: counts itself parked, orders that before its
// loads, and sweeps once more; if that sweep finds nothing either it sleeps until another thread
// calls wake_parked() after a change. Either sleep lasts at most 1 ms (the deadline checks).
class Scheduler::ThreadLoop {
 public:
  using Clock = std::chrono::steady_clock;

  ThreadLoop(Scheduler& scheduler, unsigned index)
      : scheduler_(scheduler), thread_(*scheduler.threads_[index]), index_(index),
        budget_(scheduler.options_.steps_per_visit ? scheduler.options_.steps_per_visit : 1) {}

  // However the loop ends: leave the parked count, and publish the busy time.
  ~ThreadLoop() {
    disarm();
    const auto end = Clock::now();
    const auto busy = (idle_ ? idle_since_ : end) - start_ - idle_total_;
    scheduler_.busy_seconds[index_] = std::chrono::duration<double>(busy).count();
  }

  void run() {
    while (!scheduler_.abort_.load(std::memory_order_acquire)) {
      take_inbox();
      if (current_ >= ring().size()) {
        if (!end_sweep()) return;
        if (ring().empty()) continue;
      }
      if (!visit()) return;
    }
  }

 private:
  std::vector<std::unique_ptr<Task>>& ring() { return thread_.ring; }

  void take_inbox() {
    if (!thread_.has_inbox.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> g(thread_.mutex);
    for (auto& task : thread_.inbox) ring().push_back(std::move(task));
    thread_.inbox.clear();
    thread_.has_inbox.store(false, std::memory_order_relaxed);
  }

  // A sweep over the ring is over. Returns false when the thread must stop.
  bool end_sweep() {
    current_ = 0;
    if (progressed_) {
      resume();
    } else if (!idle_step()) {
      return false;
    }
    progressed_ = false;
    return true;
  }

  // A sweep made no progress: end, time out, or go one step further towards sleeping.
  bool idle_step() {
    if (ring().empty() && scheduler_.root_done_.load(std::memory_order_acquire) &&
        scheduler_.live_.load(std::memory_order_acquire) == 0) {
      return false;
    }
    const auto now = Clock::now();
    if (now > scheduler_.deadline) {
      fail_on_timeout();
      return false;
    }
    if (armed_) {
      sleep_until_woken();
    } else if (!idle_) {
      idle_ = true;
      idle_since_ = now;
      idle_sweeps_ = 0;
    } else if (std::chrono::duration_cast<std::chrono::microseconds>(now - idle_since_) <
               scheduler_.options_.idle_spin) {
      spin();
    } else if (ring().empty()) {
      sleep_without_tasks();
    } else {
      arm();
    }
    return true;
  }

  // Progress after idling: the idle period ends.
  void resume() {
    if (idle_) idle_total_ += Clock::now() - idle_since_;
    idle_ = false;
    disarm();
  }

  void spin() {
    // Mostly spin on the core (a yield is a system call that also slows a hyperthread sibling
    // doing the work), yielding now and then for threads that share this core.
    if ((++idle_sweeps_ & 15U) == 0) std::this_thread::yield();
    else cpu_relax();
  }

  void sleep_without_tasks() {
    std::unique_lock<std::mutex> lk(thread_.mutex);
    scheduler_.parks_.fetch_add(1, std::memory_order_relaxed);
    thread_.wake.wait_for(lk, std::chrono::milliseconds(1), [&] {
      return thread_.has_inbox.load(std::memory_order_acquire) || scheduler_.run_over();
    });
  }

  void arm() {
    {
      std::lock_guard<std::mutex> g(scheduler_.park_mutex_);
      armed_epoch_ = scheduler_.park_epoch_;
    }
    scheduler_.parked_.fetch_add(1, std::memory_order_relaxed);
    store_load_barrier(scheduler_.parked_);  // pairs with the one in wake_parked()
    armed_ = true;
  }

  // Armed, and the sweep after arming found nothing either.
  void sleep_until_woken() {
    std::unique_lock<std::mutex> lk(scheduler_.park_mutex_);
    scheduler_.parks_.fetch_add(1, std::memory_order_relaxed);
    scheduler_.park_cv_.wait_for(lk, std::chrono::milliseconds(1), [&] {
      return scheduler_.park_epoch_ != armed_epoch_ || scheduler_.abort_.load(std::memory_order_acquire);
    });
    lk.unlock();
    disarm();
  }

  void disarm() {
    if (armed_) scheduler_.parked_.fetch_sub(1, std::memory_order_relaxed);
    armed_ = false;
  }

  void fail_on_timeout() {
    std::string what;
    for (const auto& task : ring()) what += "\n  " + task->describe();
    scheduler_.fail(std::make_exception_ptr(Error::format(
        "stream program ran past its timeout of {} ms; scheduler thread {} still holds {} task(s):{}",
        scheduler_.options_.timeout.count(), index_, ring().size(), what.empty() ? std::string(" none") : what)));
  }

  // One visit of the current task. Returns false when the thread must stop (the task threw).
  bool visit() {
    Task::Status status;
    try {
      status = ring()[current_]->step(budget_);
    } catch (const std::exception& e) {
      scheduler_.fail(std::make_exception_ptr(Error::format("stream {} on scheduler thread {} failed: {}",
                                                            ring()[current_]->describe(), index_, e.what())));
      return false;
    } catch (...) {
      scheduler_.fail(std::current_exception());
      return false;
    }
    if (status == Task::Done) {
      // O(1) removal of the current task; the next one slides into its place.
      std::swap(ring()[current_], ring().back());
      ring().pop_back();
      if (scheduler_.live_.fetch_sub(1, std::memory_order_acq_rel) == 1) scheduler_.wake_empty_threads();
      progressed_ = true;
    } else {
      progressed_ = progressed_ || status == Task::Progress;
      ++current_;
    }
    if (status != Task::Blocked) scheduler_.wake_parked();
    return true;
  }

  Scheduler& scheduler_;
  SchedulerThread& thread_;
  unsigned index_;
  unsigned budget_;
  std::size_t current_ = 0;
  bool progressed_ = false;
  // Busy time = the thread's run time less its idle periods, so that the clock is read only when a
  // thread goes idle or resumes, not around every visit.
  Clock::time_point start_ = Clock::now();
  bool idle_ = false;
  Clock::time_point idle_since_{};
  Clock::duration idle_total_{0};
  unsigned idle_sweeps_ = 0;
  bool armed_ = false;
  std::uint64_t armed_epoch_ = 0;
};

void Scheduler::run_thread(unsigned index) {
  ThreadLoop loop(*this, index);
  loop.run();
}

}  // namespace korch::streams::detail
