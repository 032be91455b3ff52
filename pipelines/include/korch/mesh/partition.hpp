// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::Partition: which rank owns each element of each set, which elements a rank executes and
// which values it imports from other ranks (docs/mesh.md, "Ranks").
//
//   mesh::Partition part(korch::Communicator::world(), cells, {nodes, edges, bedges, cells},
//                        {pedge, pecell, pbedge, pbecell, pcell});
//   mesh::RankExecutor exec(part);   // runs par_loops on this rank's share
//
// Every rank holds the whole mesh (the same sets and maps, built by the same program) and builds the
// same Partition. The primary set (cells) is partitioned with METIS where korch was built with it,
// else into blocks of consecutive elements; the other sets follow the primary elements that use
// them. A rank executes its owned elements and, in loops that modify dats through maps, the
// elements of other ranks that reach one of its own (OP2's execute halo), so that every increment
// of an owned element happens on its owner in the same order as on one rank.
#pragma once

#include <korch/communicator.hpp>
#include <korch/mesh/map.hpp>
#include <korch/mesh/set.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace korch::mesh {

enum class PartitionMethod {
  Automatic,  // METIS when korch was built with it, else Block
  Metis,      // graph partition of the primary set (elements joined by maps into it); an error without
              // METIS; blocks where no map of arity 2 or more leads into the primary set
  Block,      // consecutive primary elements, equal counts
};

// What a rank knows of one set.
struct SetPartition {
  std::vector<int> owner;      // owning rank of every element
  std::vector<int> owned;      // this rank's elements, ascending
  std::vector<int> executed;   // owned plus the execute halo, ascending
  std::vector<char> is_owned;  // per element: 1 when this rank owns it
  std::vector<int> import;     // elements of other ranks this rank reads (import halo), ascending
  // Per rank q: this rank's elements q imports, and the elements this rank imports from q, both
  // ascending (so sender and receiver agree on the order).
  std::vector<std::vector<int>> send_to, receive_from;
};

class Partition {
 public:
  // `sets` and `maps` list every set and map the loops use (primary included); throws korch::Error
  // naming the set or map that is missing or the method that is unavailable.
  Partition(const Communicator& comm, const Set& primary, std::vector<Set> sets, std::vector<Map> maps,
            PartitionMethod method = PartitionMethod::Automatic);

  const Communicator& communicator() const noexcept { return comm_; }
  int rank() const noexcept { return comm_.rank(); }
  int size() const noexcept { return comm_.size(); }
  // "metis" or "block" (the method used; "block" also for one rank).
  const std::string& method() const noexcept { return method_; }
  // Whether this korch was built with METIS.
  static bool have_metis() noexcept;

  // The set's partition; throws korch::Error naming the set when it was not listed.
  const SetPartition& of(const Set& set) const;
  const std::vector<Set>& sets() const noexcept { return sets_; }

 private:
  std::vector<int> partition_primary(PartitionMethod method);
  void assign_owners(const std::vector<int>& primary_owner);
  void build_halos();

  Communicator comm_;
  Set primary_;
  std::vector<Set> sets_;
  std::vector<Map> maps_;
  std::vector<SetPartition> parts_;  // parallel to sets_
  std::string method_;
};

namespace detail {
// The primary set's owner per element; graph = adjacency lists (CSR) of its elements.
std::vector<int> metis_partition(const std::vector<int>& xadj, const std::vector<int>& adjncy, int parts);
std::vector<int> block_partition(int elements, int parts);
}  // namespace detail

}  // namespace korch::mesh
