// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Progress reports of a hydro run on stdout.
//
// On a terminal, a live bar redrawn in place (carriage return) at most every 0.1 s. Anywhere else
// (a log file, a pipe, CI) carriage returns would pile up into one unreadable line, so the run
// prints one plain line each time it passes another 10 % of its length (at most 10 lines, the last
// at 100 %). Each report gives the step, t, dt and the cell updates per second so far.
#pragma once

#include <chrono>
#include <cstdio>

namespace korch::hydro {

// Seconds of wall time since t0 (the phases and the run's length in the summary).
inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class Progress {
 public:
  enum class Mode { silent, live, lines };

  // silent when quiet; live when `out` is a terminal; lines otherwise.
  static Mode mode_for(bool quiet, std::FILE* out);

  // cells: cells updated per step.
  Progress(std::FILE* out, Mode mode, double cells);

  // After a step: fraction of the run done (0..1), steps done, time t, the step's dt, seconds since
  // the run began. The call with fraction >= 1 ends the live bar with a newline.
  void update(double fraction, int steps, double t, double dt, double elapsed);

 private:
  std::FILE* out_;
  Mode mode_;
  double cells_;
  int reported_tenths_ = 0;  // lines mode: tenths of the run already reported
  double last_draw_ = -1.0;  // live mode: elapsed seconds at the last redraw
};

}  // namespace korch::hydro
