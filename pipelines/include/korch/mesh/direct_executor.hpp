// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::DirectExecutor: par_loops as Kokkos parallel_for over the iteration set on the backend's
// DeviceExecSpace.
//
// Indirectly modified arguments (INC, and WRITE/RW through a map) would race when two elements share
// a target. With IncMode::Colouring (default) the executor colours the iteration set once per loop
// (greedy, on the host, in element order): elements of one colour share no target of any indirectly
// modified dat, colours run one after another, so every target receives its updates in the same
// order on every backend and thread count. With IncMode::Atomics, indirect INC is staged per element
// and added with Kokkos::atomic_add in one pass (indirect WRITE/RW are still coloured).
// Global reductions (INC/MIN/MAX) stage one value per element and reduce with Kokkos::parallel_reduce.
//
// Constructed with a Partition, each rank runs its share of every loop (owned elements, plus the
// execute halo in loops that modify dats through maps), in the colours of the whole set's colouring,
// with halos and globals kept in step with the other ranks by a RankSync (rank_sync.hpp) exactly as
// RankExecutor does; each run is then collective. On one rank it is the plain direct executor.
//
// Call run() from the thread that initialized Kokkos (Kokkos 3.4 OpenMP accepts no other).
#pragma once

#include <korch/mesh/executor.hpp>
#include <korch/mesh/partition.hpp>
#include <korch/mesh/rank_sync.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace korch::mesh {

struct DirectOptions {
  IncMode inc_mode = IncMode::Colouring;
};

class DirectExecutor final : public Executor {
 public:
  explicit DirectExecutor(DirectOptions options = {}) : options_(options) {}
  // On the partition's ranks (the partition must outlive the executor).
  explicit DirectExecutor(const Partition& partition, DirectOptions options = {})
      : options_(options), sync_(std::make_unique<RankSync>(partition)) {}
  std::string name() const override;
  void run(ParLoopBase& loop) override;
  // The plan used for this loop (computed on first use; on ranks, over this rank's share).
  const DirectPlan& plan(const ParLoopBase& loop);
  // The halo refreshes, reductions and gather() on ranks; null without a partition.
  RankSync* sync() noexcept { return sync_.get(); }

 private:
  DirectOptions options_;
  std::unique_ptr<RankSync> sync_;
  std::map<std::uint64_t, std::unique_ptr<DirectPlan>> plans_;
};

// Builds the colouring plan of a loop (exposed for tests and benchmarks).
DirectPlan make_direct_plan(const ParLoopBase& loop, IncMode inc_mode);
// The plan over a rank's share: the ascending `elements` run, each in the colour it has in the
// whole set's colouring (so a target's increments come in the same order on any number of ranks);
// only those with is_owned[e] != 0 reduce into globals.
DirectPlan make_direct_plan(const ParLoopBase& loop, IncMode inc_mode, const std::vector<int>& elements,
                            const std::vector<char>& is_owned);

}  // namespace korch::mesh
