// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The figures korch-bench-task_bench derives from one driver's sweep over task sizes, and its
// minimum effective task granularity (METG).
//
// For a graph of n tasks run on P threads in wall time w (the best or the median of the rounds), with
// f flops per task:
//   task duration  = w * P / n   (the time one task holds a thread, the runtime's overhead included)
//   flop rate      = n * f / w
//   efficiency     = flop rate / the flop rate of the same driver at the sweep's largest task size
// METG(50%) is the smallest task duration at which the efficiency is still at least 0.5. The sweep
// goes from large tasks to small ones; at the first point whose efficiency is below the threshold,
// METG is interpolated between it and the point before, linearly in efficiency against
// log(task duration). Later points are not looked at, so noise that lifts a smaller size back over
// the threshold does not move METG. When no point falls below the threshold, METG is only bounded:
// it is at most the smallest duration measured (`reached` is false).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace korch::bench {

// One task size of one driver's sweep.
struct SweepFigures {
  long iterations = 0;
  double wall = 0;           // seconds: the rounds' statistic that the figures below use
  double median_wall = 0;    // seconds, the median round
  double best_wall = 0;      // seconds, the best round
  double task_duration = 0;  // seconds
  double flop_rate = 0;      // flops per second
  double efficiency = 0;     // against the sweep's first (largest) size
};

inline SweepFigures sweep_figures(long iterations, double wall, double median_wall, double best_wall, long tasks,
                                  unsigned threads, double flops_per_task, double reference_rate) {
  SweepFigures f;
  f.iterations = iterations;
  f.wall = wall;
  f.median_wall = median_wall;
  f.best_wall = best_wall;
  f.task_duration = wall * threads / static_cast<double>(tasks);
  f.flop_rate = static_cast<double>(tasks) * flops_per_task / wall;
  f.efficiency = reference_rate > 0 ? f.flop_rate / reference_rate : 1.0;
  return f;
}

struct Metg {
  double seconds = 0;    // the METG, or the smallest duration measured when not reached
  bool reached = false;  // false: every size kept the threshold; METG <= seconds
  bool valid = false;    // false: no sweep points
};

// `sweep` from the largest task size to the smallest.
inline Metg metg(const std::vector<SweepFigures>& sweep, double threshold = 0.5) {
  Metg m;
  if (sweep.empty()) return m;
  m.valid = true;
  for (std::size_t k = 1; k < sweep.size(); ++k) {
    const SweepFigures& a = sweep[k - 1];
    const SweepFigures& b = sweep[k];
    if (b.efficiency >= threshold) continue;
    m.reached = true;
    if (a.efficiency <= b.efficiency || a.task_duration <= 0 || b.task_duration <= 0) {
      m.seconds = a.task_duration;  // nothing to interpolate: take the grid point
    } else {
      const double s = (a.efficiency - threshold) / (a.efficiency - b.efficiency);  // 0 at a, 1 at b
      m.seconds = std::exp(std::log(a.task_duration) + s * (std::log(b.task_duration) - std::log(a.task_duration)));
    }
    return m;
  }
  m.seconds = sweep.back().task_duration;
  return m;
}

}  // namespace korch::bench
