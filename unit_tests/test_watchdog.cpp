// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The watchdog itself: a test case that never ends must fail by name within its bound. The case is
// skipped in normal runs; ctest runs it alone with a short bound (unit_tests/CMakeLists.txt) and
// expects the watchdog's report, not a hang.
#include "test_watchdog.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

TEST_CASE("Watchdog: a test case that never ends is failed by name" * doctest::skip()) {
  // Far longer than the bound the check runs with, and still finite.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  FAIL("the watchdog did not end this test case");
}

TEST_CASE("Watchdog: a watched call that never returns is named in the report" * doctest::skip()) {
  const korch::test::Watchdog::Scope scope("a call that never returns");
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(5);
  while (std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  FAIL("the watchdog did not end this test case");
}
