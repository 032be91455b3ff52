// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// doctest main for every suite: Kokkos is initialized once around the whole run, and every test
// case runs under the watchdog (test_watchdog.hpp), so a hang fails that case by name; a crash
// prints its call stack (test_crash_report.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "test_crash_report.hpp"
#include "test_listener.hpp"
#include "test_watchdog.hpp"

#include <Kokkos_Core.hpp>

#include <memory>

namespace {

// Arms the watchdog for each run of a test case (each subcase path runs the case again).
struct WatchdogListener : korch::test::Listener {
  explicit WatchdogListener(const doctest::ContextOptions&) {}
  void arm() {
    scope.reset();
    scope = std::make_unique<korch::test::Watchdog::Scope>("", korch::test::Watchdog::case_limit());
  }
  void test_case_start(const doctest::TestCaseData&) override { arm(); }
  void test_case_reenter(const doctest::TestCaseData&) override { arm(); }
  void test_case_end(const doctest::CurrentTestCaseStats&) override { scope.reset(); }

  std::unique_ptr<korch::test::Watchdog::Scope> scope;
};

}  // namespace

REGISTER_LISTENER("watchdog", 1, WatchdogListener);
REGISTER_LISTENER("crash report", 2, korch::test::CrashReport);

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  int result = 0;
  {
    doctest::Context context(argc, argv);
    result = context.run();
  }
  Kokkos::finalize();
  return result;
}
