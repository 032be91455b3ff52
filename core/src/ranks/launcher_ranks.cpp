// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "launcher_ranks.hpp"

#include <korch/config.hpp>
#include <korch/error.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace korch::detail {
namespace {

std::atomic<bool> told{false};

}  // namespace

LauncherRanks launcher_ranks() {
  // Open MPI, MPICH's Hydra and Intel MPI (PMI), MVAPICH, Slurm's srun (per job step).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE", "SLURM_STEP_NUM_TASKS"}) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    const int size = std::atoi(value);
    if (size > 1) return {size, std::string(name) + "=" + value};
  }
  // PMIx names the rank only: a rank above 0 has company.
  if (const char* rank = std::getenv("PMIX_RANK"); rank && std::atoi(rank) > 0)
    return {std::atoi(rank) + 1, std::string("PMIX_RANK=") + rank};
  return {};
}

bool ranks_independent() {
  const char* value = std::getenv("KORCH_RANKS_INDEPENDENT");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

void note_ranks_told() noexcept { told.store(true, std::memory_order_relaxed); }

void check_ranks_told() {
  if (told.load(std::memory_order_relaxed)) return;
  const LauncherRanks launched = launcher_ranks();
  if (launched.size <= 1 || ranks_independent()) return;
#if KORCH_HAVE_MPI
  throw Error::format(
      "runtime: this process is one of {} ranks started by a launcher ({}), but korch was never told of them: each "
      "rank "
      "would run the whole problem alone. Give korch the ranks: create a korch::MpiSession or take "
      "korch::Communicator::world() after MPI_Init (or korch::communicator_of(your_comm)), and fill guard cells with a "
      "GuardCellExchange over this rank's blocks (C and Fortran: korch_start_mpi or korch_use_communicator). To run {} "
      "independent copies on purpose, set KORCH_RANKS_INDEPENDENT=1",
      launched.size, launched.variable, launched.size);
#else
  throw Error::format(
      "runtime: this process is one of {} ranks started by a launcher ({}), but this korch was built without MPI "
      "(KORCH_MPI=OFF, or CMake found no MPI): each rank would run the whole problem alone. Rebuild korch with MPI "
      "(Debian: libopenmpi-dev) or run one process; to run {} independent copies on purpose, set "
      "KORCH_RANKS_INDEPENDENT=1",
      launched.size, launched.variable, launched.size);
#endif
}

}  // namespace korch::detail
