// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-hydro on an adaptive mesh over the ranks of the job: the same mesh and state, bit for bit,
// as one process alone, with regrids that move leaves between ranks, from the hand-bundled step and
// from the plan of the built-in operation, with and without conduction. One process, and 2 MPI ranks
// where MPI is built in (test_ranks_main.cpp).
#include "amr_simulation.hpp"
#include "options.hpp"

#include <korch/config.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <vector>

using namespace korch::hydro;

TEST_CASE("hydro AMR ranks: the state after steps and regrids equals one process's, bit for bit, by hand and by plan") {
  Options o;
  o.threads = 1;
  o.blocks = 2;
  o.cells_per_block = 8;
  o.max_level = 2;
  o.regrid_every = 3;
  o.quiet = true;
  o.write_output = false;
  o.steps = 15;
  // One korch::Runtime at a time: the process alone first, then the ranks. With conduction too
  // (every rank solves the whole system it gathered).
  for (double conduction : {0.0, KORCH_HAVE_KOKKOSKERNELS ? 0.05 : 0.0}) {
    INFO("conduction " << conduction);
    o.conduction = conduction;
    o.operation.clear();
    std::uint64_t hash = 0;
    std::array<double, 5> totals{};
    std::vector<int> levels;
    double time = 0;
    {
      AmrSimulation alone(o, korch::Communicator{});
      alone.run();
      hash = alone.state_hash();
      totals = alone.totals();
      levels = alone.leaves_per_level();
      time = alone.time();
    }
    // The hand-bundled step, and the plan of the built-in operation (--plan).
    for (const char* operation : {"", "builtin"}) {
      INFO("operation '" << operation << "'");
      o.operation = operation;
      AmrSimulation ranks(o, korch::Communicator::world());
      ranks.run();
      CHECK(ranks.state_hash() == hash);
      CHECK(ranks.totals() == totals);
      CHECK(ranks.leaves_per_level() == levels);
      CHECK(ranks.time() == time);
    }
    CHECK(levels.back() > 0);  // the finest level is reached
  }
}
