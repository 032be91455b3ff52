// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::RankSync: what an executor does around each loop to run it on this rank's share of a
// Partition (docs/mesh.md, "Ranks"), whatever runs the elements (RankExecutor: sequentially;
// DirectExecutor: as Kokkos kernels). Before the loop it refreshes the dirty import halo of every
// dat the loop reads across the partition and starts this rank's global reductions; the executor
// then runs the elements begin() chose; after it, end() combines the ranks' reductions in rank
// order and marks the halos of the dats the loop modified dirty. Every call is collective: every
// rank runs the same loops in the same order.
#pragma once

#include <korch/mesh/dat.hpp>
#include <korch/mesh/par_loop.hpp>
#include <korch/mesh/partition.hpp>

#include <cstdint>
#include <vector>

namespace korch::mesh {

// What the halo refreshes of a rank cost (this rank's share).
struct HaloCounts {
  std::int64_t exchanges = 0;       // dat halo refreshes (gather() is not counted)
  std::int64_t bytes_imported = 0;  // import-halo bytes this rank received
  std::int64_t bytes_exported = 0;  // export bytes this rank sent
};

// One loop's share on this rank, from begin() to end().
struct RankLoop {
  bool whole_set = true;                        // one rank: every element, no reduction over ranks
  const std::vector<int>* elements = nullptr;   // else: ascending, owned or owned + execute halo
  const std::vector<char>* is_owned = nullptr;  // per element of the set: 1 when this rank owns it
  std::vector<std::vector<char>> before;        // per argument: a modified global's value before the loop
};

class RankSync {
 public:
  // The partition must outlive this object.
  explicit RankSync(const Partition& partition) : partition_(partition) {}

  // Checks that the partition has every set the loop uses (korch::Error naming the set), refreshes
  // the halos the loop reads and, on several ranks, zeroes the INC globals it reduces into.
  RankLoop begin(const ParLoopBase& loop);
  // The elements this rank executes in the loop: its owned elements, plus the execute halo when the
  // loop modifies a dat through a map (ascending).
  const std::vector<int>& elements(const ParLoopBase& loop) const;
  // Reduces the loop's modified globals over the ranks and marks its modified dats' halos dirty.
  void end(const ParLoopBase& loop, const RankLoop& share);

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
