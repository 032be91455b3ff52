// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Grid sizes: cell counts and bytes in 64 bits, with limits that give a clean korch::Error.
#include <korch/error.hpp>
#include <korch/grid.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace korch;

namespace {

GridSpec spec_2d(int blocks, int cells) {
  GridSpec s;
  s.blocks = {blocks, blocks, 1};
  s.block_cells = {cells, cells, 1};
  s.guard = 2;
  s.guard_dims = 2;
  s.n_vars = 10;
  return s;
}

std::string error_of(const GridSpec& spec, std::uint64_t memory) {
  try {
    check_grid_size(spec, memory);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("Grid: sizes beyond the int limits are errors naming the sizes and the limit") {
  // 46341^2 blocks is just above INT_MAX = 2147483647: the old int product overflowed.
  const std::string blocks = error_of(spec_2d(46341, 2), 0);
  CHECK(blocks.find("46341 x 46341 x 1") != std::string::npos);
  CHECK(blocks.find("2147483647") != std::string::npos);
  CHECK_THROWS_WITH_AS(Grid{spec_2d(46341, 2)}, doctest::Contains("limit"), Error);
  // 46340^2 blocks fit an int; that grid's bytes are then checked against the memory given.
  const std::string bytes = error_of(spec_2d(46340, 2), std::uint64_t{1} << 30);
  CHECK(bytes.find("bytes") != std::string::npos);
  CHECK(bytes.find("1073741824") != std::string::npos);
  // Cells per direction: 65536 blocks of 65536 cells in x overflow an int index.
  GridSpec wide = spec_2d(1, 1);
  wide.blocks = {65536, 1, 1};
  wide.block_cells = {65536, 1, 1};
  const std::string cells = error_of(wide, 0);
  CHECK(cells.find("4294967296 cells") != std::string::npos);
  CHECK(cells.find("2147483647") != std::string::npos);
  // A product of three int-sized factors that would overflow even 64 bits is caught on the way.
  GridSpec huge = spec_2d(1, 1);
  huge.blocks = {2000000000, 2000000000, 2000000000};
  CHECK_THROWS_AS(check_grid_size(huge, 0), Error);
  // A grid that fits: its bytes, exactly (blocks * vars * stored cells * 8).
  CHECK(check_grid_size(spec_2d(4, 8), 0) == 16u * 10u * 12u * 12u * 8u);
  CHECK(check_grid_size(spec_2d(4, 8), std::uint64_t{1} << 30) == 16u * 10u * 12u * 12u * 8u);
  // A grid larger than the machine's memory fails in the constructor, naming the bytes.
  GridSpec big;
  big.blocks = {1024, 1024, 256};
  big.block_cells = {32, 32, 32};
  big.n_vars = 10;
  if (physical_memory_bytes() > 0) CHECK_THROWS_WITH_AS(Grid{big}, doctest::Contains("physical memory"), Error);
}
