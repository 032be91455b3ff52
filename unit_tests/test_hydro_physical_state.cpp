// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hydro: a state that is not physical (negative or non-finite density or pressure, a non-finite
// momentum or energy) stops the run at once on every configuration, naming the step, the block,
// the cell and the variable; the time step's minimum keeps such a cell instead of losing a NaN.
#include "euler.hpp"
#include "options.hpp"
#include "simulation.hpp"
#include "test_error_support.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>

#include <unistd.h>

using namespace korch::hydro;
using korch::test::error_of;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();

Options small(const std::string& config) {
  Options o;
  o.threads = 2;
  o.blocks = 2;
  o.cells_per_block = 16;
  o.steps = 5;
  o.quiet = true;
  o.write_output = false;
  if (config == "plan")
    o.operation = "builtin";
  else
    o.config = parse_configuration(config);
  return o;
}

// Sets conserved variable `var` of cell (i, j) of `block`'s interior in the current state.
void set_cell(Simulation& sim, int block, int i, int j, int var, double value) {
  const auto& in = sim.grid().block(block).interior;
  sim.grid().data()(block, sim.state() + var, in.lo[0] + i, in.lo[1] + j, in.lo[2]) = value;
}

const char* const configs[] = {"cpu", "device", "split", "action-parallel", "plan"};

}  // namespace

TEST_CASE("hydro physical state: cell_dt rejects what a minimum of NaN would have lost") {
  EulerParams p;
  p.dx[0] = p.dx[1] = 1.0 / 32;
  const double good[5] = {1, 0.1, 0, 0, 2.5};
  CHECK(cell_dt(good, p) > 0);
  const double bad[][5] = {{not_a_number, 0, 0, 0, 2.5},
                           {inf, 0, 0, 0, 2.5},
                           {-1, 0, 0, 0, 2.5},
                           {-1, 0, 0, 0, -1},  // p / rho > 0: the sound speed alone looks fine
                           {1, 0, 0, 0, -1},
                           {1, inf, 0, 0, 2.5},
                           {1, 0, 0, 0, inf},
                           {0, 0, 0, 0, 2.5}};
  for (const auto& U : bad) {
    CAPTURE(U[0]);
    CAPTURE(U[4]);
    CHECK(cell_dt(U, p) == unphysical_dt);
  }
}

TEST_CASE("hydro physical state: a bad cell in the starting state stops run() naming step, block, cell, variable") {
  struct Case {
    int var;
    double value;
    const char* says;
  };
  const Case cases[] = {{0, -1.0, "density = -1 is not positive"},
                        {0, inf, "density = inf is not finite"},
                        {0, not_a_number, "density = nan is not finite"},
                        {4, -1.0, "pressure = -0.39999"},
                        {2, inf, "momentum y = inf is not finite"}};
  for (const char* config : configs) {
    for (const Case& c : cases) {
      const std::string label = std::string(config) + ": " + c.says;
      INFO(label);
      Simulation sim(small(config));
      set_cell(sim, 2, 3, 5, c.var, c.value);
      const std::string error = error_of([&] { sim.run(); });
      INFO(error);
      CHECK(korch::test::contains(error, "at step 0"));
      CHECK(korch::test::contains(error, "block 2, cell (3, 5, 0) (global cell (3, 21, 0))"));
      CHECK(korch::test::contains(error, c.says));
      CHECK(sim.steps_done() == 0);  // stopped before the first step
    }
  }
}

TEST_CASE(
    "hydro physical state: a cell going bad during the run stops the next step naming it, on every configuration") {
  for (const char* config : configs) {
    const std::string label = config;
    INFO(label);
    Simulation sim(small(config));
    sim.step();
    // The next step's dt is already known (from the first cycle): only that cycle's reduction can
    // see the damage, which the update spreads over the cell's stencil.
    set_cell(sim, 1, 8, 9, 0, not_a_number);
    const std::string error = error_of([&] { sim.step(); });
    INFO(error);
    CHECK(korch::test::contains(error, "after step 2"));
    int block = -1, i = -1, j = -1, k = -1;
    const auto at = error.find("block ");
    REQUIRE(at != std::string::npos);
    REQUIRE(std::sscanf(error.c_str() + at, "block %d, cell (%d, %d, %d)", &block, &i, &j, &k) == 4);
    CHECK(block == 1);
    CHECK(std::abs(i - 8) <= 2);
    CHECK(std::abs(j - 9) <= 2);
    CHECK(k == 0);
    CHECK((korch::test::contains(error, "density") || korch::test::contains(error, "momentum") ||
           korch::test::contains(error, "energy") || korch::test::contains(error, "pressure")));
    CHECK(sim.steps_done() == 1);
  }
}

TEST_CASE("hydro physical state: a restart from a checkpoint holding a negative density stops before its first step") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("korch-test-hydro-bad-checkpoint-" + std::to_string(::getpid()) + ".bin"))
                               .string();
  {
    Simulation sim(small("cpu"));
    sim.step();
    sim.step();
    set_cell(sim, 3, 0, 15, 0, -1.0);
    sim.write_checkpoint(path);
  }
  Options o = small("cpu");
  o.restart = path;
  Simulation restarted(o);
  const std::string error = error_of([&] { restarted.run(); });
  std::remove(path.c_str());
  INFO(error);
  CHECK(korch::test::contains(error, "at step 2"));
  CHECK(
      korch::test::contains(error, "block 3, cell (0, 15, 0) (global cell (16, 31, 0)): density = -1 is not positive"));
  CHECK(restarted.steps_done() == 2);
}
