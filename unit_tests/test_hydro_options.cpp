// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-hydro's options (apps/hydro/lib/run/options.hpp): checks that the command-line fuzz target
// (unit_tests/fuzz, hydro_command_line) broke once, kept as cases of their own.
#include "options.hpp"

#include <korch/error.hpp>

#include <doctest/doctest.h>

#include <climits>

using namespace korch::hydro;

TEST_CASE("hydro options: --inject-failure is checked against a block count that overflows an int") {
  Options o;
  o.dim = 3;
  o.blocks = 2000;  // 8e9 blocks: more than an int counts
  o.inject_failure = INT_MAX;
  CHECK_NOTHROW(validate(o));  // the block exists; the grid's size is check_grid_size's to refuse
  CHECK_THROWS_WITH_AS(parse_options({"--dim", "3", "--blocks", "2000", "--inject-failure", "0"}),
                       doctest::Contains("--blocks"), korch::Error);
  o.dim = 2;
  o.inject_failure = 4000000;
  CHECK_THROWS_WITH_AS(
      validate(o), doctest::Contains("--inject-failure: block 4000000 does not exist: the grid has blocks 0..3999999"),
      korch::Error);
}

TEST_CASE("hydro options: periodic Sedov with an odd cell count names the options, whatever their product") {
  CHECK_THROWS_WITH_AS(parse_options({"--blocks", "3", "--cells-per-block", "3", "--boundary", "periodic"}),
                       doctest::Contains("--boundary periodic"), korch::Error);
  Options o;
  o.boundary = Boundary::periodic;
  o.blocks = 46341;  // 46341^2 overflows an int
  o.cells_per_block = 46341;
  CHECK_THROWS_WITH_AS(validate(o), doctest::Contains("--blocks 46341 x --cells-per-block 46341"), korch::Error);
  o.cells_per_block = 46342;
  CHECK_NOTHROW(validate(o));
  CHECK_NOTHROW(parse_options({"--blocks", "3", "--cells-per-block", "4", "--boundary", "periodic"}));
}
