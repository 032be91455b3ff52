// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A leaf's guard-fill plan: the terms each guard cell is made of (forest_fill_plan.cpp).
#pragma once

#include <korch/forest_guard_fill.hpp>

namespace korch {

// The value of one leaf cell, or the mean of the 2^dims finer leaf cells inside a coarser cell.
struct ForestGuardFill::Term {
  int first = 0;  // into LeafPlan::sources
  int count = 0;  // 1: the cell itself; 2^dims: their mean
};

struct ForestGuardFill::LeafPlan {
  struct Source {  // variable 0 of one leaf cell; variable v lies v * var_stride doubles further
    const double* cell;
    std::ptrdiff_t var_stride;
  };
  // A guard cell: the term `term`, or (slopes) the prolongation of term `term` (the coarse cell)
  // with terms term + 1 + 2a and term + 2 + 2a its upper and lower neighbours along axis a.
  struct Op {
    std::ptrdiff_t at;  // the guard cell in the leaf's array, variable 0
    int term;
    int slopes;      // 0, or dims
    unsigned above;  // bit a: the fine centre lies above the coarse centre along axis a
  };
  // Guard cells at..at + count - 1 that copy consecutive cells of one leaf from source on (the most
  // common op: same-level neighbours).
  struct Copy {
    std::ptrdiff_t at;
    Source source;
    int count;
  };
  struct Slow {
    std::ptrdiff_t at;
    Cell cell;
  };
  std::uint64_t generation = 0;
  std::vector<Source> sources;
  std::vector<Term> terms;
  std::vector<Copy> copies;
  std::vector<Op> ops;  // means and prolongations
  std::vector<Slow> slow;
};

}  // namespace korch
