// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The ranks of a run: one korch::Runtime per rank, each working on the blocks its rank owns
// (docs/ranks.md). In an MPI build, after an MpiSession, Communicator::world() spans MPI_COMM_WORLD;
// otherwise (no MPI, or MPI not initialized) it is this process alone and every collective is the
// identity. A code with its own MPI communicator gives it to korch: korch::communicator_of(comm)
// (korch/mpi_communicator.hpp, which includes mpi.h), or Communicator::from_handle with its Fortran
// handle. Only that header names an MPI type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace korch {

class Communicator {
 public:
  // Every rank of MPI_COMM_WORLD when MPI is initialized, else this process as rank 0 of 1.
  static Communicator world();
  // The ranks of a code's own MPI communicator, given by its Fortran handle (MPI_Comm_c2f(comm) in C
  // and C++, the integer or comm%MPI_VAL in Fortran). The communicator must stay valid while korch
  // uses it (an exchange keeps its own duplicate). Throws korch::Error when MPI is not running or
  // this korch was built without MPI.
  static Communicator from_handle(int fortran_handle);

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  // True when the ranks are MPI processes (false for the one-process communicator).
  bool uses_mpi() const noexcept { return mpi_; }
  // The MPI communicator's Fortran handle (MPI_Comm_f2c gives the MPI_Comm); meaningless without MPI.
  int handle() const noexcept { return handle_; }

  // Collectives: every rank calls them, in the same order.
  double min(double value) const;
  std::int64_t sum(std::int64_t value) const;
  std::int64_t max(std::int64_t value) const;
  // Each rank's values concatenated in rank order, on every rank (counts may differ by rank).
  std::vector<double> all_gather(const std::vector<double>& values) const;
  std::vector<std::uint64_t> all_gather(const std::vector<std::uint64_t>& values) const;
  // Each rank's text, indexed by rank, on every rank.
  std::vector<std::string> all_gather(const std::string& text) const;
  void barrier() const;

  // Stops every rank at once (MPI_Abort) after this rank failed in a way the others cannot learn
  // of by themselves (they may be waiting for its messages); without MPI, exits the process.
  [[noreturn]] void abort(int exit_code) const;

 private:
  int rank_ = 0;
  int size_ = 1;
  bool mpi_ = false;
  int handle_ = 0;
};

// Initializes MPI for the object's life and finalizes it after, when the process was started by an
// MPI launcher (mpirun, mpiexec, srun: their environment variables say so) or KORCH_MPI_INIT=1;
// a program started directly runs as one process without paying for MPI's start-up (Open MPI's
// singleton start takes most of a second). KORCH_MPI_INIT=0 never initializes MPI. Only the
// thread that created it talks to MPI (MPI_THREAD_FUNNELED): the guard-cell exchange runs on the
// thread that calls Runtime::execute, never on team threads. Without MPI in the build it does
// nothing, except refuse to run as one of several ranks (each would run the whole problem alone).
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  // Whether this process was started by an MPI launcher (or KORCH_MPI_INIT says to initialize).
  static bool launched_by_mpi() noexcept;
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owns_ = false;
};

}  // namespace korch
