// The ranks of a run: one korch::Runtime per rank, each working on the blocks its rank owns
// (docs/ranks.md). In an MPI build, after an MpiSession, Communicator::world() spans MPI_COMM_WORLD;
// otherwise (no MPI, or MPI not initialized) it is this process alone and every collective is the
// identity. No header of korch names an MPI type: code that speaks MPI itself gets the handle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace korch {

class Communicator {
 public:
  // Every rank of MPI_COMM_WORLD when MPI is initialized, else this process as rank 0 of 1.
  static Communicator world();

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  // True when the ranks are MPI processes (false for the one-process communicator).
  bool uses_mpi() const noexcept { return mpi_; }

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
};

// Initializes MPI for the object's life and finalizes it after, when the process was started by an
// MPI launcher (mpirun, mpiexec, srun: their environment variables say so) or KORCH_MPI_INIT=1;
// a program started directly runs as one process without paying for MPI's start-up (Open MPI's
// singleton start takes most of a second). KORCH_MPI_INIT=0 never initializes MPI. Only the
// thread that created it talks to MPI (MPI_THREAD_FUNNELED): the guard-cell exchange runs on the
// thread that calls Runtime::execute, never on team threads. Without MPI in the build, it does
// nothing.
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
