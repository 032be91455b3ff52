// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Timing helpers shared by the bench/ programs. The machines these run on are often shared, so
// the programs interleave the variants they compare and report medians (and bests) per variant.
#pragma once

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

namespace korch::bench {

using Clock = std::chrono::steady_clock;

// The machine's load averages over 1, 5 and 15 minutes (/proc/loadavg), printed beside every figure;
// "unknown" where the file cannot be read.
inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  if (!(in >> one >> five >> fifteen)) return "unknown";
  return one + " " + five + " " + fifteen;
}

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Seconds taken by one call of f().
template <class F>
double time_once(F&& f) {
  const auto t0 = Clock::now();
  f();
  return seconds_since(t0);
}

// Smallest of `reps` values returned by f() (each a time in seconds).
template <class F>
double best_of(int reps, F&& f) {
  double best = 1e300;
  for (int r = 0; r < reps; ++r) best = std::min(best, f());
  return best;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

inline double smallest(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }

}  // namespace korch::bench
