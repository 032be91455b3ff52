// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// mesh::RankExecutor (docs/mesh.md, "Ranks"): each loop sequentially over this rank's share, with
// RankSync's refreshes and reductions around it.
#include <korch/mesh/rank_executor.hpp>

namespace korch::mesh {

void RankExecutor::run(ParLoopBase& loop) {
  const RankLoop share = sync_.begin(loop);
  if (share.whole_set)
    loop.run_sequential();
  else
    loop.run_sequential_elements(*share.elements, *share.is_owned);
  sync_.end(loop, share);
}

}  // namespace korch::mesh
