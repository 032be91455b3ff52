// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/config.hpp>
#include <korch/runtime.hpp>
#include <korch/runtime_sizing.hpp>

#include <algorithm>
#include <cstdlib>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif
#include <unistd.h>

#if KORCH_HAVE_MPI
#include <mpi.h>
#endif

namespace korch {

unsigned MachineShare::cores_per_rank() const noexcept {
  if (bound() || ranks_on_node <= 1) return std::max(1u, cores);
  return std::max(1u, cores / ranks_on_node);
}

unsigned usable_cores() noexcept {
#if defined(__linux__)
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) == 0) {
    const int n = CPU_COUNT(&mask);
    if (n > 0) return static_cast<unsigned>(n);
  }
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

namespace {

unsigned node_cores() noexcept {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : std::max(1u, std::thread::hardware_concurrency());
}

// The leading positive integer of `text` ("4", "2(x3)", "2,1"), or 0.
unsigned leading_count(const char* text) {
  if (!text) return 0;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  return end != text && n > 0 && n < 1 << 20 ? static_cast<unsigned>(n) : 0;
}

}  // namespace

unsigned ranks_on_node_from_environment(std::string* variable) {
  // Launchers' own counts first; Slurm's only inside a task of a step (an sbatch script that runs
  // one process has the allocation's counts too).
  static const char* const launchers[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "PMI_LOCAL_SIZE",
                                          "MV2_COMM_WORLD_LOCAL_SIZE", "PALS_LOCAL_SIZE"};
  static const char* const slurm[] = {"SLURM_STEP_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE"};
  auto first = [&](const auto& names) -> unsigned {
    for (const char* name : names) {
      if (const unsigned n = leading_count(std::getenv(name))) {
        if (variable) *variable = name;
        return n;
      }
    }
    return 0;
  };
  if (const unsigned n = first(launchers)) return n;
  if (std::getenv("SLURM_PROCID")) return first(slurm);
  return 0;
}

unsigned count_ranks_on_node() {
#if KORCH_HAVE_MPI
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    MPI_Comm node = MPI_COMM_NULL;
    int size = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS &&
        MPI_Comm_size(node, &size) == MPI_SUCCESS && size > 0) {
      MPI_Comm_free(&node);
      return static_cast<unsigned>(size);
    }
    if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
  }
#endif
  const unsigned n = ranks_on_node_from_environment();
  return n > 0 ? n : 1;
}

MachineShare machine_share(unsigned ranks_on_node) {
  MachineShare s;
  s.cores = usable_cores();
  s.node_cores = std::max(s.cores, node_cores());
  if (ranks_on_node > 0) {
    s.ranks_on_node = ranks_on_node;
    s.ranks_from = "RuntimeOptions::ranks_on_node";
  } else if (const unsigned n = ranks_on_node_from_environment(&s.ranks_from)) {
    s.ranks_on_node = n;
  } else {
    s.ranks_on_node = 1;
    s.ranks_from = "one process";
  }
  return s;
}

RuntimeOptions sized_options(RuntimeOptions given, const MachineShare& share) {
  const unsigned cores = share.cores_per_rank();
  if (given.n_teams == 0) given.n_teams = RuntimeFloor::n_teams;
  if (given.threads_per_team == 0) given.threads_per_team = std::max(cores, RuntimeFloor::threads_per_team);
  if (given.n_helpers == 0) given.n_helpers = RuntimeFloor::n_helpers;
  if (given.helper_threads == 0) given.helper_threads = std::max(RuntimeFloor::helper_threads, std::min(2u, cores));
  return given;
}

}  // namespace korch
