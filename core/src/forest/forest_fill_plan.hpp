// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A leaf's guard-fill plan: the terms each guard cell is made of (forest_fill_plan.cpp).
#pragma once

#include <korch/forest_guard_fill.hpp>

#include <cmath>
#include <cstdint>

namespace korch {

namespace detail {

// The smaller of two one-sided differences of one sign, else 0: a slope that makes no new extremum.
inline double minmod(double a, double b) {
  if (a * b <= 0.0) return 0.0;
  return std::fabs(a) < std::fabs(b) ? a : b;
}

// floor(a / b) for b > 0.
inline std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace detail

// The value of one leaf cell, or the mean of the 2^dims finer leaf cells inside a coarser cell.
struct ForestGuardFill::Term {
  int first = 0;  // into LeafPlan::sources
  int count = 0;  // 1: the cell itself; 2^dims: their mean
};

struct ForestGuardFill::LeafPlan {
  struct Source {  // variable 0 of one leaf cell; variable v lies v * var_stride doubles further
    const double* cell;
    std::ptrdiff_t var_stride;
    const double* leaf;  // the data of the leaf's array the cell lies in
  };
  // A guard cell while the plan is worked out: the term `term`, or (slopes) the prolongation of term
  // `term` (the coarse cell) with terms term + 1 + 2a and term + 2 + 2a its upper and lower
  // neighbours along axis a. The finished plan keeps the means here and groups the prolongations.
  struct Op {
    std::ptrdiff_t at;  // the guard cell in the leaf's array, variable 0
    int term;
    int slopes;      // 0, or dims
    unsigned above;  // bit a: the fine centre lies above the coarse centre along axis a
  };
  // The fine guard cells inside one coarse cell: its limited slopes are found once for all of them
  // (up to 2^dims guard cells share a coarse cell).
  struct Target {
    std::ptrdiff_t at;
    unsigned above;
  };
  struct Prolongation {
    int term, slopes;
    int first_target, targets;  // into `targets`
  };
  // `rows` rows of `count` guard cells that copy consecutive cells of one leaf (the most common op:
  // same-level neighbours); row r starts at + r * step and reads source.cell + r * step.
  struct Copy {
    std::ptrdiff_t at;
    Source source;
    int count;
    int rows = 1;
    std::ptrdiff_t step = 0;
  };
  struct Slow {
    std::ptrdiff_t at;
    Cell cell;
  };
  std::uint64_t generation = 0;
  std::vector<Source> sources;
  std::vector<Term> terms;
  std::vector<Copy> copies;
  std::vector<Op> ops;  // means (and prolongations until the plan is finished)
  std::vector<Prolongation> prolongations;
  std::vector<Target> targets;
  std::vector<Slow> slow;
};

}  // namespace korch
