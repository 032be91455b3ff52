// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::RankExecutor: runs par_loops sequentially on this rank's share of a Partition (owned
// elements, plus the execute halo in loops that modify dats through maps), refreshing the import
// halo of every dat a loop reads whose halo a loop made stale, and reducing globals over the
// ranks. On one rank it is the sequential executor. Every rank runs the same loops in the same
// order (each run is collective). Dat values of other ranks' elements held on a rank are only
// meaningful in its import halo after a refresh; gather() makes a whole dat current everywhere.
#pragma once

#include <korch/mesh/dat.hpp>
#include <korch/mesh/executor.hpp>
#include <korch/mesh/partition.hpp>

#include <cstdint>
#include <string>

namespace korch::mesh {

// What the halo refreshes of a rank cost (this rank's share).
struct HaloCounts {
  std::int64_t exchanges = 0;       // dat halo refreshes (gather() is not counted)
  std::int64_t bytes_imported = 0;  // import-halo bytes this rank received
  std::int64_t bytes_exported = 0;  // export bytes this rank sent
};

class RankExecutor final : public Executor {
 public:
  // The partition must outlive the executor.
  explicit RankExecutor(const Partition& partition) : partition_(partition) {}
  std::string name() const override { return "sequential on ranks"; }
  void run(ParLoopBase& loop) override;

  // Refreshes the dat's import halo now when it is dirty (collective).
  void refresh(detail::DatCore& dat);
  // Makes every element of the dat current on every rank (collective; for output and checks).
  void gather(detail::DatCore& dat);
  const HaloCounts& counts() const noexcept { return counts_; }
  const Partition& partition() const noexcept { return partition_; }

 private:
  void gather_all(detail::DatCore& dat, const std::vector<int>& send, const std::vector<int>& receive,
                  const std::vector<int>& receive_position, const std::vector<int>& counts);
  void reduce_globals(const ParLoopBase& loop, const std::vector<std::vector<char>>& before);

  const Partition& partition_;
  HaloCounts counts_;
};

}  // namespace korch::mesh
