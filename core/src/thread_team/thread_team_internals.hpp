// What the files of ThreadTeam share and no user sees: polling with a process-wide budget, the
// brief spinning lock, and the private types of the team (its worker threads, the item ring, the
// wait slot, the list of threads to wake). The implementation notes are in thread_team.cpp.
#pragma once

#include <korch/thread_team.hpp>

#include <korch/backend/thread_spaces.hpp>
#include <korch/cpu_relax.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace korch {

namespace detail {

// Threads of all teams (and callers in wait()) that are polling right now. Polling only pays while
// a core is free for it, so at most one poller per hardware thread; the others sleep at once (and
// pollers yield their core after 2 us, see spin_until). Process-wide by nature: the cores are shared
// by every team.
inline std::atomic<int> polling_threads{0};
inline const int max_polling_threads = [] {
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

inline std::string describe_item(const DataItem& item) {
  try {
    return item.describe();
  } catch (...) {
    return "<an item whose describe() threw>";
  }
}

inline std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

}  // namespace detail

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

}  // namespace korch
