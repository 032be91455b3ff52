// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The suites' watchdog: a test that hangs fails by name instead of stopping the suite.
//
// Every test case runs under a bound (test_main.cpp arms it around each case), and a call that may
// block, such as a team's wait(), can be watched with a shorter bound of its own and a description of
// what it was waiting for. One timer thread checks the armed bounds; when one has passed it prints the
// test case, where it is defined and what it was still waiting in, and ends the process with status 3
// (nothing can unblock a thread that waits forever), so ctest reports the suite as failed at once.
//
//   KORCH_TEST_WATCHDOG_SECONDS   bound of one test case (default 300 s: a loaded 2-core machine
//                                 under ThreadSanitizer); a watched call gets min(this, 60 s)
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <mutex>
#include <string>
#include <thread>

namespace korch::test {

class Watchdog {
  struct Watch {
    std::chrono::steady_clock::time_point deadline;
    std::chrono::seconds bound;
    std::string test;
    std::string where;  // file:line of the test case
    std::string what;   // empty for the test case itself
  };

 public:
  static std::chrono::seconds case_limit() {
    const char* s = std::getenv("KORCH_TEST_WATCHDOG_SECONDS");
    const long v = s ? std::atol(s) : 0;
    return std::chrono::seconds(v > 0 ? v : 300);
  }
  static std::chrono::seconds call_limit() { return std::min(case_limit(), std::chrono::seconds(60)); }

  // Watches the calling scope: if it has not ended after `bound`, the running test case fails.
  class Scope {
   public:
    explicit Scope(std::string what, std::chrono::seconds bound = call_limit()) : dog_(instance()) {
      const doctest::ContextOptions* options = doctest::getContextOptions();
      const doctest::TestCaseData* test = options != nullptr ? options->currentTest : nullptr;
      watch_ = dog_.arm(
          Watch{std::chrono::steady_clock::now() + bound, bound, test != nullptr ? test->m_name : "(no test case)",
                test != nullptr ? std::string(test->m_file.c_str()) + ":" + std::to_string(test->m_line) : "",
                std::move(what)});
    }
    ~Scope() { dog_.disarm(watch_); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Watchdog& dog_;
    std::list<Watch>::iterator watch_;
  };

 private:
  // Never destroyed: its detached thread may still run when the process exits.
  static Watchdog& instance() {
    static Watchdog* dog = new Watchdog();
    return *dog;
  }

  Watchdog() {
    std::thread([this] { run(); }).detach();
  }

  std::list<Watch>::iterator arm(Watch watch) {
    std::lock_guard<std::mutex> lk(m_);
    watches_.push_front(std::move(watch));
    return watches_.begin();
  }
  void disarm(std::list<Watch>::iterator watch) {
    std::lock_guard<std::mutex> lk(m_);
    watches_.erase(watch);
  }

  [[noreturn]] void run() {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(250));  // a late check is fine
      std::lock_guard<std::mutex> lk(m_);
      const auto now = std::chrono::steady_clock::now();
      for (const Watch& w : watches_) {
        if (now >= w.deadline) fail(w);
      }
    }
  }

  // Called with m_ held: the innermost watched call of the same test says where it hangs.
  [[noreturn]] void fail(const Watch& expired) {
    const Watch* inner = nullptr;
    for (const Watch& w : watches_) {  // newest first
      if (w.test == expired.test && !w.what.empty()) {
        inner = &w;
        break;
      }
    }
    std::fflush(stdout);  // what doctest reported so far; _Exit flushes nothing
    std::fprintf(stderr,
                 "\n===============================================================================\n"
                 "%s:\nTEST CASE:  %s\n\nwatchdog: FAILED: %s has not finished after %lld s "
                 "(KORCH_TEST_WATCHDOG_SECONDS); ending the suite\n",
                 expired.where.c_str(), expired.test.c_str(),
                 expired.what.empty() ? "the test case" : expired.what.c_str(),
                 static_cast<long long>(expired.bound.count()));
    if (inner != nullptr && inner != &expired) std::fprintf(stderr, "  still waiting in: %s\n", inner->what.c_str());
    std::fprintf(stderr, "===============================================================================\n");
    std::fflush(stderr);
    std::_Exit(3);
  }

  std::mutex m_;
  std::list<Watch> watches_;
};

}  // namespace korch::test
