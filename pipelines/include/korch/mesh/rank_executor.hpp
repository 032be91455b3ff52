// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::RankExecutor: runs par_loops sequentially on this rank's share of a Partition (owned
// elements, plus the execute halo in loops that modify dats through maps), keeping halos and
// globals in step with the other ranks through a RankSync (rank_sync.hpp). On one rank it is the
// sequential executor. Every rank runs the same loops in the same order (each run is collective).
// Dat values of other ranks' elements held on a rank are only meaningful in its import halo after a
// refresh; gather() makes a whole dat current everywhere.
#pragma once

#include <korch/mesh/dat.hpp>
#include <korch/mesh/executor.hpp>
#include <korch/mesh/partition.hpp>
#include <korch/mesh/rank_sync.hpp>

#include <string>

namespace korch::mesh {

class RankExecutor final : public Executor {
 public:
  // The partition must outlive the executor.
  explicit RankExecutor(const Partition& partition) : sync_(partition) {}
  std::string name() const override { return "sequential on ranks"; }
  void run(ParLoopBase& loop) override;

  // Refreshes the dat's import halo now when it is dirty (collective).
  void refresh(detail::DatCore& dat) { sync_.refresh(dat); }
  // Makes every element of the dat current on every rank (collective; for output and checks).
  void gather(detail::DatCore& dat) { sync_.gather(dat); }
  const HaloCounts& counts() const noexcept { return sync_.counts(); }
  const Partition& partition() const noexcept { return sync_.partition(); }
  RankSync& sync() noexcept { return sync_; }

 private:
  RankSync sync_;
};

}  // namespace korch::mesh
