// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "launcher_ranks.hpp"
#include "mpi_handle.hpp"

#include <korch/communicator.hpp>
#include <korch/config.hpp>
#include <korch/error.hpp>

#include <cstdlib>
#include <string>

#if KORCH_HAVE_MPI
#include <mpi.h>
#endif

namespace korch {

#if KORCH_HAVE_MPI
namespace {

bool mpi_running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error::format("communicator: {} failed: {}", call, std::string(text, static_cast<std::size_t>(length)));
}

template <class T>
std::vector<T> gather_all(const std::vector<T>& values, MPI_Datatype type, int size, MPI_Comm comm) {
  const int count = static_cast<int>(values.size());
  std::vector<int> counts(static_cast<std::size_t>(size)), offsets(static_cast<std::size_t>(size), 0);
  check(MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm), "MPI_Allgather");
  int total = 0;
  for (int r = 0; r < size; ++r) {
    offsets[static_cast<std::size_t>(r)] = total;
    total += counts[static_cast<std::size_t>(r)];
  }
  std::vector<T> out(static_cast<std::size_t>(total));
  check(MPI_Allgatherv(values.data(), count, type, out.data(), counts.data(), offsets.data(), type, comm),
        "MPI_Allgatherv");
  return out;
}

}  // namespace
#endif

Communicator Communicator::world() {
  Communicator c;
#if KORCH_HAVE_MPI
  if (mpi_running()) {
    c.mpi_ = true;
    c.handle_ = static_cast<int>(MPI_Comm_c2f(MPI_COMM_WORLD));
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size_);
    detail::note_ranks_told();
  }
#endif
  return c;
}

Communicator Communicator::from_handle(int fortran_handle) {
  Communicator c;
#if KORCH_HAVE_MPI
  if (!mpi_running())
    throw Error::format(
        "communicator: handle {} given while MPI is not running: call MPI_Init first (or create a "
        "korch::MpiSession)",
        fortran_handle);
  const MPI_Comm comm = MPI_Comm_f2c(static_cast<MPI_Fint>(fortran_handle));
  if (comm == MPI_COMM_NULL)
    throw Error::format("communicator: handle {} is MPI_COMM_NULL: give a communicator this rank belongs to",
                        fortran_handle);
  c.mpi_ = true;
  c.handle_ = fortran_handle;
  check(MPI_Comm_rank(comm, &c.rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm, &c.size_), "MPI_Comm_size");
  detail::note_ranks_told();
  return c;
#else
  throw Error::format(
      "communicator: handle {} given, but this korch was built without MPI: rebuild korch with MPI "
      "(KORCH_MPI=ON; Debian: libopenmpi-dev) to run on the code's ranks",
      fortran_handle);
#endif
}

double Communicator::min(double value) const {
#if KORCH_HAVE_MPI
  if (mpi_) {
    double out = value;
    check(MPI_Allreduce(&value, &out, 1, MPI_DOUBLE, MPI_MIN, detail::mpi_comm(*this)), "MPI_Allreduce (min)");
    return out;
  }
#endif
  return value;
}

std::int64_t Communicator::sum(std::int64_t value) const {
#if KORCH_HAVE_MPI
  if (mpi_) {
    std::int64_t out = value;
    check(MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_SUM, detail::mpi_comm(*this)), "MPI_Allreduce (sum)");
    return out;
  }
#endif
  return value;
}

std::int64_t Communicator::max(std::int64_t value) const {
#if KORCH_HAVE_MPI
  if (mpi_) {
    std::int64_t out = value;
    check(MPI_Allreduce(&value, &out, 1, MPI_INT64_T, MPI_MAX, detail::mpi_comm(*this)), "MPI_Allreduce (max)");
    return out;
  }
#endif
  return value;
}

std::vector<double> Communicator::all_gather(const std::vector<double>& values) const {
#if KORCH_HAVE_MPI
  if (mpi_) return gather_all(values, MPI_DOUBLE, size_, detail::mpi_comm(*this));
#endif
  return values;
}

std::vector<std::uint64_t> Communicator::all_gather(const std::vector<std::uint64_t>& values) const {
#if KORCH_HAVE_MPI
  if (mpi_) return gather_all(values, MPI_UINT64_T, size_, detail::mpi_comm(*this));
#endif
  return values;
}

std::vector<std::string> Communicator::all_gather(const std::string& text) const {
#if KORCH_HAVE_MPI
  if (mpi_) {
    const std::vector<char> chars(text.begin(), text.end());
    const auto all = gather_all(chars, MPI_CHAR, size_, detail::mpi_comm(*this));
    const std::vector<double> lengths = all_gather(std::vector<double>{static_cast<double>(text.size())});
    std::vector<std::string> out;
    std::size_t at = 0;
    for (const double n : lengths) {
      out.emplace_back(all.data() + at, static_cast<std::size_t>(n));
      at += static_cast<std::size_t>(n);
    }
    return out;
  }
#endif
  return {text};
}

void Communicator::barrier() const {
#if KORCH_HAVE_MPI
  if (mpi_) check(MPI_Barrier(detail::mpi_comm(*this)), "MPI_Barrier");
#endif
}

void Communicator::abort(int exit_code) const {
#if KORCH_HAVE_MPI
  if (mpi_) MPI_Abort(detail::mpi_comm(*this), exit_code);
#endif
  std::exit(exit_code);
}

bool MpiSession::launched_by_mpi() noexcept {
  if (const char* force = std::getenv("KORCH_MPI_INIT")) return std::string(force) == "1";
  // Open MPI, PMIx-based launchers (Open MPI 5, Slurm), PMI-1/2 (MPICH's Hydra, Slurm's srun).
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS"})
    if (std::getenv(name)) return true;
  return false;
}

MpiSession::MpiSession(int* argc, char*** argv) {
#if KORCH_HAVE_MPI
  if (!mpi_running() && launched_by_mpi()) {
    int provided = 0;
    check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    owns_ = true;
    if (provided < MPI_THREAD_FUNNELED) {
      MPI_Finalize();
      owns_ = false;
      throw Error("MPI session: this MPI library does not offer MPI_THREAD_FUNNELED, which korch's team threads need");
    }
  }
  if (mpi_running()) detail::note_ranks_told();
#else
  (void)argc;
  (void)argv;
  // Started as one of several ranks, a build without MPI would run the whole problem in each.
  const auto launched = detail::launcher_ranks();
  if (launched.size > 1 && std::getenv("KORCH_MPI_INIT") == nullptr && !detail::ranks_independent())
    throw Error::format(
        "MPI session: started as one of {} ranks ({}), but this korch was built without MPI "
        "(KORCH_MPI=OFF, or CMake found no MPI): every rank would run the whole problem alone; "
        "rebuild korch with MPI (Debian: libopenmpi-dev) or run one process (KORCH_RANKS_INDEPENDENT=1 "
        "runs independent copies on purpose)",
        launched.size, launched.variable);
#endif
}

MpiSession::~MpiSession() {
#if KORCH_HAVE_MPI
  if (owns_ && mpi_running()) MPI_Finalize();
#endif
}

}  // namespace korch
