// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The same global grid cut into blocks of other sizes gives the same state to the bit, and the
// same state hash: a cell's coordinates come from its place in the whole grid, every cell's
// update reads only its neighbours (through guard cells at block edges), and the time step is a
// minimum. A wrong guard-cell fill at a block edge, or a cell updated twice or not at all, shows
// up as a difference against the run in one block.
#include "options.hpp"
#include "runtime_configuration.hpp"
#include "simulation.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

using namespace korch::hydro;

namespace {

struct Result {
  std::vector<double> cells;  // the five conserved variables, each in the global x-fastest order
  std::uint64_t hash = 0;
  double time = 0;
};

Result run(Problem problem, int dim, int blocks, int cells, const char* config, int steps) {
  Options o;
  o.problem = problem;
  o.dim = dim;
  o.config = parse_configuration(config);
  o.split_even = true;
  o.threads = 2;
  o.blocks = blocks;
  o.cells_per_block = cells;
  o.quiet = true;
  o.write_output = false;
  Simulation sim(o);
  Result r;
  r.hash = sim.state_hash();
  for (int s = 0; s < steps; ++s) sim.step();
  for (int v = 0; v < 5; ++v) {
    const std::vector<double> f = sim.gather(v);
    r.cells.insert(r.cells.end(), f.begin(), f.end());
  }
  r.hash ^= sim.state_hash() * 3;  // the initial state's hash and the last one's
  r.time = sim.time();
  return r;
}

// Whether two runs hold the same bits (== would let 0.0 and -0.0 pass).
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("hydro: blocks of any size give the same bits and state hash (2-D, every problem)") {
  for (const Problem problem : {Problem::sedov, Problem::sod_x, Problem::sod_y, Problem::wave}) {
    CAPTURE(to_string(problem));
    const Result whole = run(problem, 2, 1, 36, "cpu", 12);
    for (const auto& [blocks, cells] : {std::pair{2, 18}, std::pair{3, 12}, std::pair{4, 9}, std::pair{6, 6}}) {
      CAPTURE(blocks);
      const Result cut = run(problem, 2, blocks, cells, "cpu", 12);
      CHECK(cut.time == whole.time);
      CHECK(same_bits(cut.cells, whole.cells));
      CHECK(cut.hash == whole.hash);
    }
  }
}

TEST_CASE("hydro: blocks of any size give the same bits and state hash on device and split (3-D)") {
  const Result whole = run(Problem::sedov, 3, 1, 12, "cpu", 6);
  for (const char* config : {"cpu", "device", "split"}) {
    for (const auto& [blocks, cells] : {std::pair{2, 6}, std::pair{3, 4}}) {
      CAPTURE(config);
      CAPTURE(blocks);
      const Result cut = run(Problem::sedov, 3, blocks, cells, config, 6);
      CHECK(cut.time == whole.time);
      CHECK(same_bits(cut.cells, whole.cells));
      CHECK(cut.hash == whole.hash);
    }
  }
}

TEST_CASE("hydro: the state hash changes with any one value, and with two values swapped") {
  Options o;
  o.problem = Problem::wave;
  o.blocks = 2;
  o.cells_per_block = 8;
  o.quiet = true;
  o.write_output = false;
  Simulation sim(o);
  sim.step();
  const std::uint64_t before = sim.state_hash();
  auto data = sim.grid().data();
  const auto& m = sim.grid().block(1);
  const int i = m.interior.lo[0] + 3, j = m.interior.lo[1] + 5, k = m.interior.lo[2];
  const int var = sim.state();
  const double x = data(1, var, i, j, k);
  data(1, var, i, j, k) = std::nextafter(x, 2.0);
  CHECK(sim.state_hash() != before);
  data(1, var, i, j, k) = x;
  CHECK(sim.state_hash() == before);
  const double y = data(1, var + 4, i, j + 1, k);
  data(1, var, i, j, k) = y;  // density and energy of neighbouring cells swapped
  data(1, var + 4, i, j + 1, k) = x;
  CHECK(sim.state_hash() != before);
}
