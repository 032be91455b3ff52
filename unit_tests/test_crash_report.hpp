// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The suites' crash report: when a test case dies of a signal (a segmentation fault, an abort),
// doctest names the case; this listener adds the call stack at the fault, so that a crash on a
// machine one cannot debug on (a lent GPU, CI) says where it happened. The suites are linked with
// their symbols exported, so the frames carry function names; a frame shown as `program(+0x1f2e)`
// is a local function, which `addr2line -f -C -e program 0x1f2e` names (scripts/gpu-check does).
//
// Register it once per executable, next to its main: REGISTER_LISTENER("crash report", 2, ...).
#pragma once

#include "test_listener.hpp"

#include <doctest/doctest.h>

#include <execinfo.h>
#include <unistd.h>

namespace korch::test {

struct CrashReport : Listener {
  explicit CrashReport(const doctest::ContextOptions&) {}
  // Runs inside doctest's signal handler, on the crashed thread: only async-signal-safe calls
  // (backtrace() is, once its unwinder is loaded: the constructor of the static below does that).
  void test_case_exception(const doctest::TestCaseException& e) override {
    if (!e.is_crash) return;
    void* frames[64];
    const int n = backtrace(frames, 64);
    const char header[] = "\n[crash report] call stack at the fault (innermost first):\n";
    if (write(STDERR_FILENO, header, sizeof(header) - 1) < 0) return;
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
  }

 private:
  // backtrace() loads libgcc's unwinder on its first call, which allocates: done here, at start.
  struct LoadUnwinder {
    LoadUnwinder() {
      void* frame[1];
      (void)backtrace(frame, 1);
    }
  };
  static inline const LoadUnwinder load_unwinder_{};
};

}  // namespace korch::test
