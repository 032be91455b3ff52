// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "forest_ranks.hpp"

#include "../ranks/mpi_handle.hpp"

#include <korch/config.hpp>
#include <korch/error.hpp>

#include <algorithm>
#include <string>
#include <unordered_set>

namespace korch::detail {

std::vector<int> morton_partition(int n, int ranks) {
  std::vector<int> owner(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    owner[static_cast<std::size_t>(i)] =
        static_cast<int>(static_cast<std::int64_t>(i) * ranks / std::max<std::int64_t>(n, 1));
  return owner;
}

std::vector<int> morton_partition(const std::vector<double>& costs, int ranks) {
  double total = 0;
  for (double c : costs) total += c;
  const int n = static_cast<int>(costs.size());
  if (!(total > 0)) return morton_partition(n, ranks);
  std::vector<int> owner(costs.size());
  double before = 0;
  int previous = -1;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    const double middle = before + 0.5 * costs[i];
    int rank = std::min(ranks - 1, static_cast<int>(middle / total * ranks));
    // With as many leaves as ranks, no rank is passed over (a rank without leaves cannot run its
    // cycles): the pieces advance a rank at a time, early enough for each rank left to get a leaf.
    if (n >= ranks) {
      const int leaves_left = n - static_cast<int>(i);
      rank = std::clamp(rank, std::max(previous, ranks - leaves_left), std::min(previous + 1, ranks - 1));
    }
    owner[i] = rank;
    previous = rank;
    before += costs[i];
  }
  return owner;
}

double partition_imbalance(const std::vector<double>& costs, const std::vector<int>& owners, int ranks) {
  std::vector<double> load(static_cast<std::size_t>(ranks), 0.0);
  double total = 0;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    load[static_cast<std::size_t>(owners[i])] += costs[i];
    total += costs[i];
  }
  if (!(total > 0)) return 1.0;
  return *std::max_element(load.begin(), load.end()) / (total / ranks);
}

std::vector<BlockKey> leaves_near(const BlockForest& forest, const BlockKey& leaf, int rings) {
  std::unordered_set<BlockKey, BlockKeyHash> seen{leaf};
  std::vector<BlockKey> found{leaf}, frontier{leaf};
  const auto directions = NeighbourList::directions(forest.shape().dims);
  for (int ring = 0; ring < rings; ++ring) {
    std::vector<BlockKey> next;
    for (const BlockKey& k : frontier)
      for (const Direction& d : directions)
        for (const ForestNeighbour& n : forest.neighbours(k, d))
          if (n.kind != ForestNeighbour::Kind::boundary && seen.insert(n.key).second) {
            found.push_back(n.key);
            next.push_back(n.key);
          }
    frontier = std::move(next);
  }
  return found;
}

#if KORCH_HAVE_MPI
namespace {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error::format("ForestMesh: {} failed: {}", call, std::string(text, static_cast<std::size_t>(length)));
}

}  // namespace
#endif

std::vector<std::vector<double>> swap_buffers(const Communicator& comm, const std::vector<std::vector<double>>& sends,
                                              const std::vector<std::size_t>& receive_sizes, int tag) {
  const int size = comm.size();
  std::vector<std::vector<double>> received(static_cast<std::size_t>(size));
  for (int r = 0; r < size; ++r)
    received[static_cast<std::size_t>(r)].resize(receive_sizes[static_cast<std::size_t>(r)]);
  if (size == 1) return received;
#if KORCH_HAVE_MPI
  const MPI_Comm c = mpi_comm(comm);
  std::vector<MPI_Request> requests;
  for (int r = 0; r < size; ++r) {
    auto& in = received[static_cast<std::size_t>(r)];
    if (r == comm.rank() || in.empty()) continue;
    requests.emplace_back();
    check(MPI_Irecv(in.data(), static_cast<int>(in.size()), MPI_DOUBLE, r, tag, c, &requests.back()), "MPI_Irecv");
  }
  for (int r = 0; r < size; ++r) {
    const auto& out = sends[static_cast<std::size_t>(r)];
    if (r == comm.rank() || out.empty()) continue;
    requests.emplace_back();
    check(MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_DOUBLE, r, tag, c, &requests.back()), "MPI_Isend");
  }
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  return received;
#else
  (void)tag;
  (void)sends;
  throw Error("ForestMesh: several ranks in a korch built without MPI");
#endif
}

}  // namespace korch::detail
