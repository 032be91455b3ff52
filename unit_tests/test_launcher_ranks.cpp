// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A program that a launcher started as several ranks but that never told korch of them gets an
// error on its first cycle instead of running the whole problem once per rank; the launcher is
// played here by its environment variables (this process is never an MPI rank).
#include "test_error_support.hpp"

#include <korch/action_routine.hpp>
#include <korch/bundle.hpp>
#include <korch/communicator.hpp>
#include <korch/config.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/grid.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>

using namespace korch;
using korch::test::contains;
using korch::test::error_of;

namespace {

struct Cycle {
  Cycle() : grid(spec()), runtime(RuntimeOptions{2, 2, 2, 1}), bundle("count") {
    bundle.add(ActionRoutine("A", [this](const ActionContext&, DataItem&) { ++items; }));
  }
  static GridSpec spec() {
    GridSpec s;
    s.blocks = {2, 1, 1};
    s.block_cells = {4, 4, 1};
    return s;
  }
  void run() { runtime.execute(bundle, configurations::get("cpu_only"), grid); }
  Grid grid;
  Runtime runtime;
  Bundle bundle;
  std::atomic<int> items{0};
};

}  // namespace

TEST_CASE("Launcher: several ranks never told to korch fail the first cycle, naming the size and the fix") {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS",
                           "PMIX_RANK", "KORCH_RANKS_INDEPENDENT", "KORCH_MPI_INIT"})
    unsetenv(name);
  {
    Cycle cycle;
    cycle.run();  // one process: no launcher
    CHECK(cycle.items > 0);
    // The launcher's environment is read on a runtime's first cycle only.
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    cycle.run();
  }
  {
    Cycle cycle;
    std::string e = error_of([&] { cycle.run(); });
    CHECK_MESSAGE(contains(e, "one of 2 ranks started by a launcher (OMPI_COMM_WORLD_SIZE=2)"), e);
    CHECK_MESSAGE(contains(e, "KORCH_RANKS_INDEPENDENT=1"), e);
    CHECK_MESSAGE(contains(e, KORCH_HAVE_MPI ? "korch::MpiSession" : "built without MPI"), e);
    // Refused until the check passes: every later cycle of that runtime is checked again.
    CHECK(contains(error_of([&] { cycle.run(); }), "one of 2 ranks"));
    unsetenv("OMPI_COMM_WORLD_SIZE");
  }
  setenv("SLURM_STEP_NUM_TASKS", "3", 1);
  CHECK(contains(error_of([] { Cycle().run(); }), "one of 3 ranks started by a launcher (SLURM_STEP_NUM_TASKS=3)"));
  setenv("SLURM_STEP_NUM_TASKS", "1", 1);  // one task: nothing to tell
  Cycle().run();
  unsetenv("SLURM_STEP_NUM_TASKS");
  setenv("PMIX_RANK", "1", 1);
  CHECK(contains(error_of([] { Cycle().run(); }), "(PMIX_RANK=1)"));

  // Independent copies on purpose.
  setenv("KORCH_RANKS_INDEPENDENT", "1", 1);
  Cycle independent;
  independent.run();
  CHECK(independent.items > 0);
  unsetenv("KORCH_RANKS_INDEPENDENT");
  unsetenv("PMIX_RANK");
}

#if KORCH_HAVE_MPI
TEST_CASE("Launcher: a program that made an MpiSession has told korch its ranks") {
  setenv("KORCH_MPI_INIT", "1", 1);  // a singleton MPI start: this process is rank 0 of 1
  {
    MpiSession mpi(nullptr, nullptr);
    unsetenv("KORCH_MPI_INIT");
    setenv("PMI_SIZE", "2", 1);
    Cycle cycle;
    cycle.run();
    CHECK(cycle.items > 0);
    unsetenv("PMI_SIZE");
  }
}
#endif
