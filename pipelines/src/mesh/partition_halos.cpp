// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::Partition's execute halos and import/export lists. Every rank computes them for every rank
// (the mesh is the same everywhere), so no list has to be sent: what rank r sends rank q is the
// ascending list of r's elements that q imports, which q computes alike.
#include <korch/mesh/partition.hpp>

#include <algorithm>

namespace korch::mesh {

namespace {

// The ranks that execute element e of a set whose outgoing maps are `from`: its owner and the
// owners of everything it maps to (the execute halo of those ranks).
void executing_ranks(int e, int owner, const std::vector<const Map*>& from,
                     const std::vector<const SetPartition*>& targets, std::vector<int>& ranks) {
  ranks.assign(1, owner);
  for (std::size_t m = 0; m < from.size(); ++m)
    for (int i = 0; i < from[m]->arity(); ++i)
      ranks.push_back(targets[m]->owner[static_cast<std::size_t>((*from[m])(e, i))]);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
}

}  // namespace

void Partition::build_halos() {
  const int nranks = comm_.size();
  auto index_of = [this](const Set& s) {
    return static_cast<std::size_t>(std::find(sets_.begin(), sets_.end(), s) - sets_.begin());
  };
  // needed[s][q][e]: rank q reads element e of set s without owning it.
  std::vector<std::vector<std::vector<char>>> needed(sets_.size());
  for (std::size_t s = 0; s < sets_.size(); ++s)
    needed[s].assign(static_cast<std::size_t>(nranks), std::vector<char>(static_cast<std::size_t>(sets_[s].size()), 0));
  std::vector<int> ranks;
  for (std::size_t f = 0; f < sets_.size(); ++f) {
    std::vector<const Map*> from;
    std::vector<const SetPartition*> targets;
    std::vector<std::size_t> target_index;
    for (const Map& m : maps_)
      if (m.from() == sets_[f]) {
        from.push_back(&m);
        target_index.push_back(index_of(m.to()));
        targets.push_back(&parts_[target_index.back()]);
      }
    SetPartition& p = parts_[f];
    for (int e = 0; e < sets_[f].size(); ++e) {
      const int owner = p.owner[static_cast<std::size_t>(e)];
      executing_ranks(e, owner, from, targets, ranks);
      for (int q : ranks) {
        if (q == comm_.rank()) p.executed.push_back(e);
        if (q != owner) needed[f][static_cast<std::size_t>(q)][static_cast<std::size_t>(e)] = 1;
        for (std::size_t m = 0; m < from.size(); ++m)
          for (int i = 0; i < from[m]->arity(); ++i) {
            const int t = (*from[m])(e, i);
            if (targets[m]->owner[static_cast<std::size_t>(t)] != q)
              needed[target_index[m]][static_cast<std::size_t>(q)][static_cast<std::size_t>(t)] = 1;
          }
      }
    }
  }
  const auto me = static_cast<std::size_t>(comm_.rank());
  for (std::size_t s = 0; s < sets_.size(); ++s) {
    SetPartition& p = parts_[s];
    p.send_to.assign(static_cast<std::size_t>(nranks), {});
    p.receive_from.assign(static_cast<std::size_t>(nranks), {});
    for (int e = 0; e < sets_[s].size(); ++e) {
      const auto owner = static_cast<std::size_t>(p.owner[static_cast<std::size_t>(e)]);
      if (needed[s][me][static_cast<std::size_t>(e)]) {
        p.import.push_back(e);
        p.receive_from[owner].push_back(e);
      }
      if (owner != me) continue;
      for (std::size_t q = 0; q < static_cast<std::size_t>(nranks); ++q)
        if (needed[s][q][static_cast<std::size_t>(e)]) p.send_to[q].push_back(e);
    }
  }
}

}  // namespace korch::mesh
