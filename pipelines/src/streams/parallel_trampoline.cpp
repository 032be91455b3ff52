// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One scheduler thread's trampoline: it visits its tasks in turn, and when a sweep over them finds
// nothing to do it waits for work, polling only while that can pay off and sleeping otherwise.
#include "parallel_internals.hpp"
#include "spin_budget.hpp"

#include <korch/cpu_relax.hpp>
#include <korch/error.hpp>

#include <algorithm>
#include <thread>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace korch::streams::detail {

// Idle handling, one step per sweep that found nothing to do (docs/streams.md, "Waiting for work"):
//   1. the first such sweep marks the thread idle;
//   2. the thread polls (sweeps again) while that can pay off: another thread of the run is awake
//      (only it can make something to do), the spin budget allows it, the run's threads get the
//      cores they would use (CoreShare), and it was not descheduled since its last sweep. Between
//      sweeps it pauses the core and yields it every 16th time, or every time while the run has
//      more awake threads than cores (a yield that leaves the run without progress counts as
//      descheduled);
//   3. then it sleeps. A thread with no tasks sleeps on its own condition variable until a task is
//      spawned to it or the run ends. A thread whose tasks are blocked arms: counts itself parked,
//      orders that before its loads and sweeps once more; if that sweep finds nothing either it
//      sleeps until another thread calls wake_parked() after a change.
// A sleep lasts at most 1 ms for the deadline check, doubling while sleeps time out with nothing
// changed, up to 64 ms, and never past the deadline.
class Scheduler::ThreadLoop {
 public:
  using Clock = std::chrono::steady_clock;

  ThreadLoop(Scheduler& scheduler, unsigned index)
      : scheduler_(scheduler),
        thread_(*scheduler.threads_[index]),
        index_(index),
        budget_(scheduler.options_.steps_per_visit ? scheduler.options_.steps_per_visit : 1),
        never_sleep_(scheduler.options_.idle_spin == std::chrono::microseconds::max()),
        spin_(never_sleep_ ? std::chrono::microseconds(0) : scheduler.options_.idle_spin) {
#if defined(__linux__)
    if (pthread_getcpuclockid(pthread_self(), &thread_.cpu_clock) == 0) {
      thread_.has_cpu_clock.store(true, std::memory_order_release);
    }
#endif
    thread_.started_ns.store(ns(start_), std::memory_order_release);
  }

  // However the loop ends: leave the parked and awake counts, and publish the times.
  ~ThreadLoop() {
    thread_.started_ns.store(0, std::memory_order_relaxed);
    thread_.has_cpu_clock.store(false, std::memory_order_relaxed);
    disarm();
    const auto end = Clock::now();
    end_poll(end);
    scheduler_.awake_threads_.fetch_sub(1, std::memory_order_relaxed);
    const auto busy = (idle_ ? idle_since_ : end) - start_ - idle_total_;
    scheduler_.busy_seconds[index_] = std::chrono::duration<double>(busy).count();
    scheduler_.spin_seconds[index_] = std::chrono::duration<double>(poll_total_).count();
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
  enum class Poll { No, Pause, Yield };  // how an idle step waits before the next sweep

  static constexpr Clock::duration first_sleep = std::chrono::milliseconds(1);
  static constexpr Clock::duration longest_sleep = std::chrono::milliseconds(64);

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
    publish_cpu();
    if (armed_) {
      sleep_until_woken(now);
      return true;
    }
    if (!idle_) {
      begin_idle(now);
    } else if (const Poll mode = poll_mode(now); mode != Poll::No) {
      count_poll(now);
      pause(mode);
    } else if (ring().empty()) {
      sleep_without_tasks(now);
      return true;
    } else {
      arm(now);
    }
    last_sweep_ = now;
    return true;
  }

  void begin_idle(Clock::time_point now) {
    yielded_ = false;
    idle_ = true;
    polling_ = true;
    idle_since_ = now;
    idle_sweeps_ = 0;
  }

  // Whether the idle thread sweeps again rather than sleeps (step 2 above), and how it lets the
  // core go between sweeps.
  Poll poll_mode(Clock::time_point now) {
    if (never_sleep_) return Poll::Pause;
    if (!polling_) return Poll::No;  // it slept in this idle period: a change wakes it
    const unsigned awake = scheduler_.awake_threads_.load(std::memory_order_relaxed);
    // Only another awake thread of the run can give this one something to do.
    if (awake < 2) return Poll::No;
    if (!spin_.allows(idle_since_, now)) return Poll::No;
    const bool off_core = now - last_sweep_ > SpinBudget::preemption_gap;
    if (off_core && (!yielded_ || scheduler_.progress() == progress_seen_)) {
      // Off its core since the last sweep, and not because a yield ran the run's other threads:
      // a thread outside the run had the core.
      spin_.preempted(now);
      return Poll::No;
    }
    // Other threads want the cores too (the run's threads get clearly less than the cores they sit
    // on): sleep. Polling would take a core from them or from the thread this one waits for, and a
    // yield would put this thread behind them for a time slice.
    if (scheduler_.core_share_.starved(now, [this, now] { return scheduler_.usage(now); })) {
      return Poll::No;
    }
    // More awake threads than cores, all of the run's: hand the core on at every sweep, which runs
    // a thread of the run that has work, what this one waits for.
    return awake > scheduler_.cores_ ? Poll::Yield : Poll::Pause;
  }

  void pause(Poll mode) {
    // Mostly pause on the core; now and then (every sweep in Yield mode) yield it to the run's
    // threads that share it, remembering the run's progress to tell afterwards whom it ran.
    yielded_ = mode == Poll::Yield || (++idle_sweeps_ & 15U) == 0;
    if (yielded_) {
      if (!never_sleep_) progress_seen_ = scheduler_.progress();
      std::this_thread::yield();
    } else {
      cpu_relax();
    }
  }

  // Counts the time since the last sweep as polling if the thread polled and kept its core all
  // along (time off the core, yielded or preempted, cost this thread nothing). After a yield the
  // gap is mostly the run's other threads on this core, however short it is, so it is not counted.
  void count_poll(Clock::time_point now) {
    if (polling_ && !yielded_ && now - last_sweep_ <= SpinBudget::preemption_gap) poll_total_ += now - last_sweep_;
  }

  // The idle period's polling is over (the thread sleeps, or found work).
  void end_poll(Clock::time_point now) {
    count_poll(now);
    polling_ = false;
  }

  // Where this thread runs, for CoreShare (read on idle steps: a working thread's may be stale).
  void publish_cpu() {
#if defined(__linux__)
    thread_.cpu.store(sched_getcpu(), std::memory_order_relaxed);
#endif
  }

  // Progress after idling: the idle period ends, and tells the spin budget how polling fared.
  void resume() {
    if (idle_) {
      publish_cpu();
      const auto now = Clock::now();
      idle_total_ += now - idle_since_;
      if (polling_)
        spin_.caught();
      else
        spin_.missed(now - idle_since_);
      end_poll(now);
      sleep_for_ = first_sleep;
    }
    idle_ = false;
    disarm();
  }

  // How long the next sleep may last: its backed-off length, but not past the deadline.
  Clock::duration sleep_bound(Clock::time_point now) const {
    if (scheduler_.deadline == Clock::time_point::max()) return sleep_for_;
    return std::min<Clock::duration>(sleep_for_, scheduler_.deadline - now + std::chrono::microseconds(100));
  }

  // After a sleep: one that timed out with nothing changed makes the next one longer.
  void woke(bool changed) {
    if (!changed) sleep_for_ = std::min(2 * sleep_for_, longest_sleep);
    last_sweep_ = Clock::now();
  }

  static long long ns(Clock::time_point t) { return std::chrono::nanoseconds(t.time_since_epoch()).count(); }

  // The thread's sleeping time, for CoreShare.
  void fall_asleep(Clock::time_point now) { thread_.asleep_since_ns.store(ns(now), std::memory_order_relaxed); }
  void wake_up() {
    const long long since = thread_.asleep_since_ns.load(std::memory_order_relaxed);
    thread_.asleep_ns.store(thread_.asleep_ns.load(std::memory_order_relaxed) + ns(Clock::now()) - since,
                            std::memory_order_relaxed);
    thread_.asleep_since_ns.store(0, std::memory_order_relaxed);
  }

  void sleep_without_tasks(Clock::time_point now) {
    end_poll(now);
    bool changed;
    {
      std::unique_lock<std::mutex> lk(thread_.mutex);
      scheduler_.parks_.fetch_add(1, std::memory_order_relaxed);
      scheduler_.awake_threads_.fetch_sub(1, std::memory_order_relaxed);
      thread_.asleep = true;
      fall_asleep(now);
      changed = thread_.wake.wait_for(lk, sleep_bound(now), [&] {
        return thread_.has_inbox.load(std::memory_order_acquire) || scheduler_.run_over();
      });
      wake_up();
      scheduler_.count_awake(thread_);  // unless its waker did
    }
    woke(changed);
  }

  void arm(Clock::time_point now) {
    end_poll(now);
    {
      std::lock_guard<std::mutex> g(scheduler_.park_mutex_);
      armed_epoch_ = scheduler_.park_epoch_;
    }
    scheduler_.parked_.fetch_add(1, std::memory_order_relaxed);
    store_load_barrier(scheduler_.parked_);  // pairs with the one in wake_parked()
    armed_ = true;
  }

  // Armed, and the sweep after arming found nothing either.
  void sleep_until_woken(Clock::time_point now) {
    bool changed;
    {
      std::unique_lock<std::mutex> lk(scheduler_.park_mutex_);
      scheduler_.parks_.fetch_add(1, std::memory_order_relaxed);
      scheduler_.awake_threads_.fetch_sub(1, std::memory_order_relaxed);
      ++scheduler_.asleep_parked_;
      const std::uint64_t asleep_epoch = scheduler_.park_epoch_;
      fall_asleep(now);
      changed = scheduler_.park_cv_.wait_for(lk, sleep_bound(now), [&] {
        return scheduler_.park_epoch_ != armed_epoch_ || scheduler_.abort_.load(std::memory_order_acquire);
      });
      wake_up();
      if (scheduler_.park_epoch_ == asleep_epoch) {  // no wake_parked() counted it awake
        --scheduler_.asleep_parked_;
        scheduler_.awake_threads_.fetch_add(1, std::memory_order_relaxed);
      }
    }
    disarm();
    woke(changed);
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
    if (status != Task::Blocked) {
      thread_.progress.store(thread_.progress.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      scheduler_.wake_parked();
    }
    return true;
  }

  Scheduler& scheduler_;
  SchedulerThread& thread_;
  unsigned index_;
  unsigned budget_;
  bool never_sleep_;
  SpinBudget spin_;
  std::size_t current_ = 0;
  bool progressed_ = false;
  // Busy time = the thread's run time less its idle periods, so that the clock is read only when a
  // thread goes idle or resumes, not around every visit.
  Clock::time_point start_ = Clock::now();
  bool idle_ = false;
  bool polling_ = false;  // idle and not yet slept in this idle period
  Clock::time_point idle_since_{};
  Clock::time_point last_sweep_{};  // of the last idle step, to see the thread was descheduled
  Clock::duration idle_total_{0};
  Clock::duration poll_total_{0};
  Clock::duration sleep_for_ = first_sleep;
  unsigned idle_sweeps_ = 0;
  bool armed_ = false;
  std::uint64_t armed_epoch_ = 0;
  bool yielded_ = false;             // the last idle step yielded the core
  std::uint64_t progress_seen_ = 0;  // the run's progress when it did
};

void Scheduler::run_thread(unsigned index) {
  ThreadLoop loop(*this, index);
  loop.run();
}

}  // namespace korch::streams::detail
