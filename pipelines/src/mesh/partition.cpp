// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::Partition: owners, execute halos and import/export lists (docs/mesh.md, "Ranks").
#include <korch/error.hpp>
#include <korch/mesh/partition.hpp>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>

namespace korch::mesh {

namespace {

// The primary set's elements joined when one element of another set maps to both (edge -> 2 cells).
void adjacency(const Set& primary, const std::vector<Map>& maps, std::vector<int>& xadj, std::vector<int>& adjncy) {
  const int n = primary.size();
  std::vector<std::vector<int>> neighbours(static_cast<std::size_t>(n));
  for (const Map& m : maps) {
    if (m.to() != primary || m.arity() < 2) continue;
    for (int e = 0; e < m.from().size(); ++e)
      for (int a = 0; a < m.arity(); ++a)
        for (int b = 0; b < m.arity(); ++b)
          if (m(e, a) != m(e, b)) neighbours[static_cast<std::size_t>(m(e, a))].push_back(m(e, b));
  }
  xadj.assign(1, 0);
  adjncy.clear();
  for (auto& list : neighbours) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    adjncy.insert(adjncy.end(), list.begin(), list.end());
    xadj.push_back(static_cast<int>(adjncy.size()));
  }
}

// Rank 0's values on every rank (METIS runs once, on rank 0).
std::vector<int> from_rank0(const Communicator& comm, const std::vector<int>& values) {
  std::vector<std::uint64_t> mine;
  if (comm.rank() == 0) mine.assign(values.begin(), values.end());
  const std::vector<std::uint64_t> all = comm.all_gather(mine);
  return std::vector<int>(all.begin(), all.end());
}

}  // namespace

namespace detail {
std::vector<int> block_partition(int elements, int parts) {
  std::vector<int> owner(static_cast<std::size_t>(elements));
  for (int e = 0; e < elements; ++e)
    owner[static_cast<std::size_t>(e)] = static_cast<int>(static_cast<long long>(e) * parts / std::max(elements, 1));
  return owner;
}
}  // namespace detail

Partition::Partition(const Communicator& comm, const Set& primary, std::vector<Set> sets, std::vector<Map> maps,
                     PartitionMethod method)
    : comm_(comm), primary_(primary), sets_(std::move(sets)), maps_(std::move(maps)) {
  if (!primary_.valid()) throw Error("mesh::Partition: the primary set is a null handle: pass the cells");
  if (std::find(sets_.begin(), sets_.end(), primary_) == sets_.end()) sets_.push_back(primary_);
  for (const Map& m : maps_) {
    if (!m.valid()) throw Error("mesh::Partition: a map is a null handle: list constructed maps");
    for (const Set* s : {&m.from(), &m.to()})
      if (std::find(sets_.begin(), sets_.end(), *s) == sets_.end())
        throw Error::format("mesh::Partition: map '{}' uses set '{}', which is not in the list of sets: add it",
                            m.name(), s->name());
  }
  parts_.resize(sets_.size());
  assign_owners(partition_primary(method));
  build_halos();
}

std::vector<int> Partition::partition_primary(PartitionMethod method) {
  if (method == PartitionMethod::Metis && !have_metis())
    throw Error(
        "mesh::Partition: METIS was asked for but this korch was built without it: install libmetis-dev and "
        "reconfigure, or use PartitionMethod::Block");
  // METIS needs links between primary elements: elements of another set mapping to two or more.
  bool linked = false;
  for (const Map& m : maps_) linked = linked || (m.to() == primary_ && m.arity() >= 2 && m.from().size() > 0);
  const bool metis = method != PartitionMethod::Block && have_metis() && comm_.size() > 1 && linked;
  method_ = metis ? "metis" : "block";
  if (!metis) return detail::block_partition(primary_.size(), comm_.size());
  std::vector<int> owner;
  std::string failure;
  if (comm_.rank() == 0) {
    try {
      std::vector<int> xadj, adjncy;
      adjacency(primary_, maps_, xadj, adjncy);
      owner = detail::metis_partition(xadj, adjncy, comm_.size());
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  // Rank 0's failure stops every rank (the others would wait for its partition).
  failure = comm_.all_gather(failure)[0];
  if (!failure.empty()) throw Error::format("rank 0: {}", failure);
  return from_rank0(comm_, owner);
}

// Other sets follow the primary: an element mapping to primary elements goes with its first one
// (an edge with its first cell); an element primary elements map to goes with the lowest such
// element (a node with its first cell); anything else is split in blocks.
void Partition::assign_owners(const std::vector<int>& primary_owner) {
  for (std::size_t s = 0; s < sets_.size(); ++s) {
    const Set& set = sets_[s];
    std::vector<int> owner(static_cast<std::size_t>(set.size()), -1);
    if (set == primary_) owner = primary_owner;
    for (const Map& m : maps_)
      if (m.from() == set && m.to() == primary_ && set != primary_)
        for (int e = 0; e < set.size(); ++e)
          if (owner[static_cast<std::size_t>(e)] < 0) owner[static_cast<std::size_t>(e)] = primary_owner[m(e, 0)];
    for (const Map& m : maps_)
      if (m.from() == primary_ && m.to() == set && set != primary_)
        for (int e = 0; e < primary_.size(); ++e)
          for (int i = 0; i < m.arity(); ++i) {
            int& o = owner[static_cast<std::size_t>(m(e, i))];
            if (o < 0) o = primary_owner[static_cast<std::size_t>(e)];
          }
    const std::vector<int> blocks = detail::block_partition(set.size(), comm_.size());
    for (std::size_t e = 0; e < owner.size(); ++e)
      if (owner[e] < 0) owner[e] = blocks[e];
    SetPartition& p = parts_[s];
    p.owner = std::move(owner);
    p.is_owned.assign(p.owner.size(), 0);
    for (std::size_t e = 0; e < p.owner.size(); ++e)
      if (p.owner[e] == comm_.rank()) {
        p.is_owned[e] = 1;
        p.owned.push_back(static_cast<int>(e));
      }
  }
}

const SetPartition& Partition::of(const Set& set) const {
  for (std::size_t s = 0; s < sets_.size(); ++s)
    if (sets_[s] == set) return parts_[s];
  throw Error::format(
      "mesh::Partition: set '{}' is not partitioned: list it (and the maps using it) when "
      "building the Partition",
      set.valid() ? set.name() : std::string("(null)"));
}

}  // namespace korch::mesh
