// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The runtime sized to the machine: cores from the affinity mask shared by the ranks on the node,
// explicit options winning, every built-in configuration fitting the smallest default, and teams
// that start their threads only when a cycle first uses them.
#include <korch/bundle.hpp>
#include <korch/configuration.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/grid.hpp>
#include <korch/plan/scheduler.hpp>
#include <korch/runtime.hpp>
#include <korch/runtime_sizing.hpp>

#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

using namespace korch;

namespace {

// Sets (or unsets, with nullopt) an environment variable for the object's life.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      ::setenv(name, value->c_str(), 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Every launcher variable unset for the object's life.
struct NoLauncher {
  std::vector<std::unique_ptr<ScopedEnv>> vars;
  NoLauncher() {
    for (const char* n :
         {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE", "MV2_COMM_WORLD_LOCAL_SIZE",
          "PALS_LOCAL_SIZE", "SLURM_STEP_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE", "SLURM_PROCID"})
      vars.push_back(std::make_unique<ScopedEnv>(n, std::nullopt));
  }
};

MachineShare share(unsigned cores, unsigned node_cores, unsigned ranks) {
  MachineShare s;
  s.cores = cores;
  s.node_cores = node_cores;
  s.ranks_on_node = ranks;
  return s;
}

}  // namespace

TEST_CASE("Runtime sizing: the ranks on the node come from the launcher's environment") {
  NoLauncher clean;
  std::string from;
  CHECK(ranks_on_node_from_environment(&from) == 0);
  CHECK(machine_share().ranks_on_node == 1);
  CHECK(machine_share().ranks_from == "one process");
  {
    ScopedEnv slurm("SLURM_NTASKS_PER_NODE", "4");
    CHECK(ranks_on_node_from_environment() == 0);  // an sbatch script's one process: not a task of a step
    ScopedEnv task("SLURM_PROCID", "0");
    CHECK(ranks_on_node_from_environment(&from) == 4);
    CHECK(from == "SLURM_NTASKS_PER_NODE");
    ScopedEnv step("SLURM_STEP_TASKS_PER_NODE", "3(x2)");
    CHECK(ranks_on_node_from_environment(&from) == 3);
    CHECK(from == "SLURM_STEP_TASKS_PER_NODE");
    ScopedEnv ompi("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
    CHECK(ranks_on_node_from_environment(&from) == 2);  // the launcher's own count first
    CHECK(from == "OMPI_COMM_WORLD_LOCAL_SIZE");
    const MachineShare s = machine_share();
    CHECK(s.ranks_on_node == 2);
    CHECK(s.ranks_from == "OMPI_COMM_WORLD_LOCAL_SIZE");
    CHECK(machine_share(5).ranks_on_node == 5);  // an explicit count wins
  }
  {
    ScopedEnv bad("MPI_LOCALNRANKS", "none");
    CHECK(ranks_on_node_from_environment() == 0);
  }
  CHECK(usable_cores() >= 1);
  CHECK(count_ranks_on_node() >= 1);
}

TEST_CASE("Runtime sizing: the cores are divided among the ranks unless a launcher bound the rank") {
  CHECK(share(16, 16, 4).cores_per_rank() == 4);
  CHECK(share(2, 2, 4).cores_per_rank() == 1);  // never 0
  CHECK(share(1, 2, 2).cores_per_rank() == 1);  // bound to one core: that core is the rank's
  CHECK(share(4, 16, 2).cores_per_rank() == 4);
  CHECK(share(8, 8, 1).cores_per_rank() == 8);
}

TEST_CASE("Runtime sizing: counts left 0 follow the cores, explicit ones win, and the built-ins always fit") {
  const RuntimeOptions big = sized_options({}, share(16, 16, 2));
  CHECK(big.n_teams == RuntimeFloor::n_teams);
  CHECK(big.threads_per_team == 8);
  CHECK(sized_options({}, share(2, 2, 1)).threads_per_team == RuntimeFloor::threads_per_team);
  CHECK(big.n_helpers == RuntimeFloor::n_helpers);
  CHECK(big.helper_threads == 2);
  RuntimeOptions given;
  given.threads_per_team = 1;
  given.n_helpers = 2;
  const RuntimeOptions mixed = sized_options(given, share(16, 16, 1));
  CHECK(mixed.threads_per_team == 1);
  CHECK(mixed.n_helpers == 2);
  CHECK(mixed.n_teams == RuntimeFloor::n_teams);
  for (const MachineShare& s : {share(1, 1, 1), share(2, 2, 4), share(1, 64, 1), share(64, 64, 1)}) {
    const RuntimeOptions o = sized_options({}, s);
    const RuntimeShape shape{o.n_teams, o.threads_per_team, o.n_helpers, o.helper_threads};
    CAPTURE(s.cores);
    CHECK(o.threads_per_team >= s.cores_per_rank());
    CHECK(o.helper_threads <= 2);
    for (const auto& name : configurations::names()) {
      CAPTURE(name);
      CHECK_NOTHROW(validate(configurations::get(name), shape));
    }
    const RuntimeShape planned = plan::SchedulerOptions{}.shape;  // what default plans are made for
    CHECK(shape.n_teams >= planned.n_teams);
    CHECK(shape.threads_per_team >= planned.threads_per_team);
    CHECK(shape.n_helpers >= planned.n_helpers);
  }
}

TEST_CASE("Runtime sizing: a default Runtime is sized, keeps explicit counts, and starts a team when first used") {
  {
    Runtime rt;
    const RuntimeOptions& o = rt.options();
    CHECK(o.n_teams == RuntimeFloor::n_teams);
    CHECK(o.threads_per_team >= RuntimeFloor::threads_per_team);
    CHECK(o.threads_per_team >= rt.machine().cores_per_rank());
    CHECK(o.helper_threads >= 1);
    CHECK(rt.started_threads() == 0);
    GridSpec spec;
    spec.block_cells = {8, 8, 8};
    spec.blocks = {2, 1, 1};
    spec.n_vars = 1;
    Grid grid(spec);
    Bundle b("sizing");
    b.add(ActionRoutine("A", [](const ActionContext&, DataItem&) {}));
    rt.execute(b, configurations::get("cpu_only"), grid);
    CHECK(rt.started_threads() == o.threads_per_team);  // one team, no helper
    rt.execute(b, configurations::get("cpu_only"), grid);
    CHECK(rt.started_threads() == o.threads_per_team);      // kept, not started again
    CHECK(rt.team(2).mode() == TeamMode::Idle);             // started by asking for it
    CHECK(rt.started_threads() == 2 * o.threads_per_team);  // team 0 and team 2 only
    CHECK(rt.helper_team(0).n_max() == o.helper_threads);
  }
  Runtime rt(RuntimeOptions{2, 1, 1, 1, {}, 0, 0});
  CHECK(rt.options().n_teams == 2);
  CHECK(rt.options().threads_per_team == 1);
  CHECK(rt.options().n_helpers == 1);
  CHECK(rt.options().helper_threads == 1);
  CHECK_THROWS_WITH_AS(rt.team(2), doctest::Contains("team 2 does not exist"), Error);
}
