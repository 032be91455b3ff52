// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What ForestMesh needs to share a forest's leaves among ranks: the partition of the Morton curve,
// the leaves near a leaf, and one exchange of buffers between every pair of ranks.
#pragma once

#include <korch/block_forest.hpp>
#include <korch/communicator.hpp>

#include <cstddef>
#include <vector>

namespace korch::detail {

// The owner of each of n leaves in Morton order: contiguous pieces, sizes differing by at most one.
std::vector<int> morton_partition(int n, int ranks);
// The same by cost: contiguous pieces whose summed costs are as equal as the curve allows (a leaf
// goes to the rank whose share of the total holds the middle of its cost), and every rank gets a
// piece when there are as many leaves as ranks. Costs are >= 0; when they sum to 0, the pieces of
// morton_partition(n, ranks).
std::vector<int> morton_partition(const std::vector<double>& costs, int ranks);
// The largest rank's summed cost over the mean (1: balanced; 1 when nothing costs).
double partition_imbalance(const std::vector<double>& costs, const std::vector<int>& owners, int ranks);

// `leaf` and the leaves within `rings` steps of neighbours (faces, edges and corners) of it.
std::vector<BlockKey> leaves_near(const BlockForest& forest, const BlockKey& leaf, int rings);

// Sends sends[r] to every rank r (none to this rank) and returns what each rank sent here, whose
// sizes the caller knows (receive_sizes[r]). Collective over the ranks that exchange; on one
// process, only empty buffers. Throws korch::Error naming the MPI call that failed.
std::vector<std::vector<double>> swap_buffers(const Communicator& comm, const std::vector<std::vector<double>>& sends,
                                              const std::vector<std::size_t>& receive_sizes, int tag);

}  // namespace korch::detail
