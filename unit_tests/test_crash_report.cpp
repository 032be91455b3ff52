// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The crash report itself: a test case that dies of a signal must leave its call stack, with the
// function that faulted named in it. The case is skipped in normal runs; ctest runs it alone
// (unit_tests/CMakeLists.txt) and expects the report.
#include <doctest/doctest.h>

#include <csignal>

// Exported (the suites link with their symbols exported) and never inlined, so that the report
// can name it.
extern "C" [[gnu::noinline]] void korch_test_crash_report_fault() {
  std::raise(SIGSEGV);
  FAIL("no signal arrived");
}

TEST_CASE("Crash report: a test case that dies of a signal prints its call stack" * doctest::skip()) {
  korch_test_crash_report_fault();
}
