// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/fault_injection.hpp>

#include <korch/error.hpp>

#include <array>
#include <atomic>
#include <mutex>

namespace korch::faults {

namespace {

constexpr std::size_t kPoints = 2;

struct Armed {
  std::uint64_t countdown = 0;  // passes left until the next fault; 0: not armed
  std::uint64_t every = 0;
};

std::atomic<bool> any_armed{false};
std::atomic<std::uint64_t> fired_count{0};
std::mutex armed_mutex;
std::array<Armed, kPoints> armed;

}  // namespace

const char* to_string(Point point) noexcept {
  switch (point) {
    case Point::distributor_push: return "distributor_push";
    case Point::helper_item: return "helper_item";
  }
  return "?";
}

void arm(Point point, std::uint64_t nth, std::uint64_t every) {
  std::lock_guard<std::mutex> lk(armed_mutex);
  armed[static_cast<std::size_t>(point)] = Armed{nth, every};
  bool any = false;
  for (const Armed& a : armed) any = any || a.countdown > 0;
  any_armed.store(any, std::memory_order_relaxed);
}

void disarm() noexcept {
  std::lock_guard<std::mutex> lk(armed_mutex);
  armed.fill(Armed{});
  any_armed.store(false, std::memory_order_relaxed);
}

std::uint64_t fired() noexcept { return fired_count.load(std::memory_order_relaxed); }

void pass(Point point) {
  if (!any_armed.load(std::memory_order_relaxed)) return;
  {
    std::lock_guard<std::mutex> lk(armed_mutex);
    Armed& a = armed[static_cast<std::size_t>(point)];
    if (a.countdown == 0 || --a.countdown > 0) return;
    a.countdown = a.every;
  }
  fired_count.fetch_add(1, std::memory_order_relaxed);
  throw Error::format("injected fault at {} (korch::faults)", to_string(point));
}

}  // namespace korch::faults
