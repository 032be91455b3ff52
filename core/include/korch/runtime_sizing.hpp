// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The share of the machine a Runtime sizes its teams to (docs/runtime-sizing.md): the processors
// this process may run on (its affinity mask), divided among the ranks of the job on this node,
// and the team and thread counts a default RuntimeOptions gets from that share.
//
//   korch::RuntimeOptions o;               // every count 0: sized to the machine
//   o.threads_per_team = 8;                // an explicit count wins over the default
//   korch::Runtime runtime(o);             // runtime.options() holds the counts it used
#pragma once

#include <string>

namespace korch {

struct RuntimeOptions;

// The least a default Runtime has, whatever the machine (docs/runtime-sizing.md):
//  * every built-in configuration (korch/configurations/builtin.hpp) runs on it: they use at most
//    4 teams and 6 helpers of 1 thread; cpu_gpu_action_parallel starts a team with 3 threads, and
//    concurrent_itor's and split_itor's `post` team may hold 3 at once (its own and its thread
//    publishers');
//  * so does a plan made with the planner's default shape (plan::SchedulerOptions) or korch-plan's
//    default --threads: 6 teams whose pipelines start with 4 threads.
struct RuntimeFloor {
  static constexpr unsigned n_teams = 6;
  static constexpr unsigned threads_per_team = 4;
  static constexpr unsigned n_helpers = 6;
  static constexpr unsigned helper_threads = 1;
};

struct MachineShare {
  unsigned cores = 1;          // processors in this process's affinity mask
  unsigned node_cores = 1;     // processors online on this node
  unsigned ranks_on_node = 1;  // processes of this job on this node
  std::string ranks_from;      // where ranks_on_node came from: an option, a variable, MPI or "one process"
  // True when the mask is narrower than the node (a launcher bound the rank): the mask is then the
  // rank's own share and is not divided again.
  bool bound() const noexcept { return cores < node_cores; }
  // The cores this rank may keep busy: the mask, divided among the node's ranks unless bound.
  unsigned cores_per_rank() const noexcept;
};

// Processors in this process's affinity mask (sched_getaffinity); the hardware's count where
// the mask cannot be read; at least 1.
unsigned usable_cores() noexcept;

// The ranks of this job on this node as the launcher's environment says (Open MPI's
// OMPI_COMM_WORLD_LOCAL_SIZE, MPICH's MPI_LOCALNRANKS, Slurm's SLURM_NTASKS_PER_NODE or
// SLURM_STEP_TASKS_PER_NODE, PMI_LOCAL_SIZE, MVAPICH's MV2_COMM_WORLD_LOCAL_SIZE, PALS_LOCAL_SIZE);
// 0 when none does. `variable`, when given, receives the variable's name.
unsigned ranks_on_node_from_environment(std::string* variable = nullptr);

// Collective over MPI_COMM_WORLD when MPI is running (every rank must call it): the ranks that share
// this node's memory (MPI_Comm_split_type). Without MPI, the environment's count or 1. Put it into
// RuntimeOptions::ranks_on_node where the launcher does not say; the Runtime itself never calls a
// collective (a Runtime made on some ranks only must not hang).
unsigned count_ranks_on_node();

// This process's share: `ranks_on_node` when non-zero, else the environment's count, else 1.
MachineShare machine_share(unsigned ranks_on_node = 0);

// `given` with every count that is 0 filled in from `share` (explicit counts stay):
//   threads_per_team   = max(cores per rank, RuntimeFloor::threads_per_team)
//   helper_threads     = min(2, cores per rank), at least RuntimeFloor::helper_threads
//   n_teams, n_helpers = RuntimeFloor's (teams start their threads when a cycle first uses them).
RuntimeOptions sized_options(RuntimeOptions given, const MachineShare& share);

}  // namespace korch
