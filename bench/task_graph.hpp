// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The task graphs of korch-bench-task_bench: `width` points over `steps` timesteps, one task per
// (timestep, point), and a dependence pattern that says which tasks of timestep t-1 the task
// (t, i) reads. Every task of timestep 0 has no dependencies; a task never has more than
// max_dependencies of them. Points are 0 .. width-1, timesteps 0 .. steps-1.
//
//  trivial     no dependencies at all: W x T independent tasks.
//  no_comm     (t, i) reads (t-1, i): W independent chains.
//  stencil_1d  (t, i) reads (t-1, i-1), (t-1, i), (t-1, i+1), the neighbours that exist (the two
//              edge points read two tasks).
//  fft         a radix-2 butterfly: at timestep t >= 1 the stage is k = (t-1) mod L with
//              L = ceil(log2 W) stages, and (t, i) reads (t-1, i) and its partner (t-1, i XOR 2^k),
//              which is i + 2^k when bit k of i is clear and i - 2^k when it is set. When W is not
//              a power of two a partner at W or beyond does not exist and is left out. After L
//              timesteps every point has seen every other one. W = 1 has no stages: (t-1, 0) only.
//  tree        a binary fan-out tree between consecutive timesteps, rooted at point 0:
//              (t, i) reads (t-1, i/2), so point p of one timestep feeds points 2p and 2p+1 of the
//              next (point 0 feeds itself and point 1). Every task has one input; the points of the
//              lower half feed two tasks each and those of the upper half feed none.
#pragma once

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace korch::bench {

enum class Pattern { trivial, no_comm, stencil_1d, fft, tree };

inline const std::vector<Pattern>& all_patterns() {
  static const std::vector<Pattern> patterns = {Pattern::trivial, Pattern::no_comm, Pattern::stencil_1d, Pattern::fft,
                                                Pattern::tree};
  return patterns;
}

inline const char* to_string(Pattern p) {
  switch (p) {
    case Pattern::trivial: return "trivial";
    case Pattern::no_comm: return "no_comm";
    case Pattern::stencil_1d: return "stencil_1d";
    case Pattern::fft: return "fft";
    case Pattern::tree: return "tree";
  }
  return "?";
}

inline Pattern pattern_from_string(const std::string& name) {
  for (Pattern p : all_patterns()) {
    if (name == to_string(p)) return p;
  }
  throw std::invalid_argument("unknown pattern '" + name + "'");
}

// The dependencies of one task: up to max_dependencies points of the previous timestep, in
// increasing point order, without repeats.
struct Dependencies {
  static constexpr int max_dependencies = 3;
  std::array<long, max_dependencies> point{};
  int count = 0;
  void add(long p) { point[static_cast<std::size_t>(count++)] = p; }
};

class TaskGraph {
 public:
  TaskGraph(Pattern pattern, long width, long steps) : pattern_(pattern), width_(width), steps_(steps) {
    if (width < 1 || steps < 1) throw std::invalid_argument("a task graph needs width >= 1 and steps >= 1");
    while ((1L << fft_stages_) < width_) ++fft_stages_;
  }

  Pattern pattern() const noexcept { return pattern_; }
  long width() const noexcept { return width_; }
  long steps() const noexcept { return steps_; }
  long tasks() const noexcept { return width_ * steps_; }
  // Index of task (t, i) in a timestep-major array of width() x steps() entries.
  long index(long t, long i) const noexcept { return t * width_ + i; }

  // The points of timestep t-1 that task (t, i) reads (none for t == 0).
  Dependencies dependencies(long t, long i) const {
    Dependencies d;
    if (t == 0) return d;
    switch (pattern_) {
      case Pattern::trivial: break;
      case Pattern::no_comm: d.add(i); break;
      case Pattern::stencil_1d:
        if (i > 0) d.add(i - 1);
        d.add(i);
        if (i + 1 < width_) d.add(i + 1);
        break;
      case Pattern::fft: {
        if (fft_stages_ == 0) {
          d.add(i);
          break;
        }
        const long stage = (t - 1) % fft_stages_;
        const long partner = i ^ (1L << stage);
        if (partner < i) d.add(partner);
        d.add(i);
        if (partner > i && partner < width_) d.add(partner);
        break;
      }
      case Pattern::tree: d.add(i / 2); break;
    }
    return d;
  }

  // Edges of the whole graph (the sum of every task's dependency count).
  long edges() const {
    long n = 0;
    for (long t = 0; t < steps_; ++t)
      for (long i = 0; i < width_; ++i) n += dependencies(t, i).count;
    return n;
  }

 private:
  Pattern pattern_;
  long width_;
  long steps_;
  long fft_stages_ = 0;  // ceil(log2 width)
};

}  // namespace korch::bench
