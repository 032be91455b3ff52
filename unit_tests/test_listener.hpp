// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The base of the suites' doctest listeners (the watchdog, the crash report): every reporter
// callback does nothing, so that a listener overrides only the ones it acts on.
#pragma once

#include <doctest/doctest.h>

namespace korch::test {

struct Listener : doctest::IReporter {
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace korch::test
