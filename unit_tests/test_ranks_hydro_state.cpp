// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hydro on several ranks: a cell that is not physical on one rank stops every rank with the same
// message naming it (physical_state.hpp), at the start of a run and after a step; no rank waits.
// One process, and 2 MPI ranks where MPI is built in (test_ranks_main.cpp).
#include "options.hpp"
#include "simulation.hpp"
#include "test_error_support.hpp"

#include <doctest/doctest.h>

#include <limits>
#include <string>

using namespace korch::hydro;
using korch::test::contains;
using korch::test::error_of;

namespace {

Options small() {
  Options o;
  o.threads = 1;
  o.blocks = 2;
  o.cells_per_block = 16;
  o.steps = 4;
  o.quiet = true;
  o.write_output = false;
  return o;
}

// Sets the density of cell (i, j) of global block `global` in the current state, on its rank.
void set_density(Simulation& sim, int global, int i, int j, double value) {
  for (const auto& m : sim.grid().blocks())
    if (m.global_id == global)
      sim.grid().data()(m.id, sim.state(), m.interior.lo[0] + i, m.interior.lo[1] + j, m.interior.lo[2]) = value;
}

void check_same_on_every_rank(const Simulation& sim, const std::string& error) {
  for (const auto& other : sim.communicator().all_gather(error)) CHECK(other == error);
}

}  // namespace

TEST_CASE("hydro ranks: a bad cell in the starting state of one rank stops every rank, naming it") {
  Simulation sim(small());
  set_density(sim, 3, 2, 3, -1.0);
  const std::string error = error_of([&] { sim.run(); });
  INFO(error);
  CHECK(contains(error, "at step 0"));
  CHECK(contains(error, "block 3, cell (2, 3, 0) (global cell (18, 19, 0)): density = -1 is not positive"));
  if (sim.communicator().size() > 1) CHECK(contains(error, "rank "));
  check_same_on_every_rank(sim, error);
}

TEST_CASE("hydro ranks: a cell going bad on one rank stops every rank after the next step, naming it") {
  Simulation sim(small());
  sim.step();
  set_density(sim, 1, 8, 8, std::numeric_limits<double>::quiet_NaN());
  const std::string error = error_of([&] { sim.step(); });
  INFO(error);
  CHECK(contains(error, "after step 2"));
  CHECK(contains(error, "block 1, cell ("));
  check_same_on_every_rank(sim, error);
  CHECK(sim.steps_done() == 1);
}
