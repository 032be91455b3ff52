// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/action_metadata.hpp>
#include <korch/block.hpp>
#include <korch/error.hpp>
#include <korch/plan/stage_routine.hpp>
#include <korch/tile.hpp>

#include <algorithm>

namespace korch::plan {

ActionDeclaration stage_declaration(const Plan& plan, const Stage& stage) {
  ActionDeclaration d;
  d.action = stage.routine;
  for (const auto& name : stage.actions) {
    const ActionDeclaration& a = plan.action(name);
    d.iterator = a.iterator;
    for (const auto& r : a.reads) {
      bool merged = false;
      for (auto& have : d.reads)
        if (have.variable == r.variable) {
          have.stencil = std::max(have.stencil, r.stencil);
          merged = true;
        }
      if (!merged) d.reads.push_back(r);
    }
    for (const auto& w : a.writes)
      if (!d.writes_variable(w)) d.writes.push_back(w);
  }
  return d;
}

ActionRoutine stage_routine(const std::string& name, std::vector<ActionBody> bodies, DataSource& source,
                            ActionDeclaration declaration) {
  DataSource* g = &source;
  ActionRoutine routine(name, [bodies = std::move(bodies), g, name](const ActionContext&, DataItem& item) {
    int block = 0;
    Box box;
    if (auto* t = dynamic_cast<Tile*>(&item)) {
      block = t->block_id();
      box = t->box();
    } else if (auto* b = dynamic_cast<Block*>(&item)) {
      block = b->block_id();
      box = b->interior();
    } else if (auto* m = dynamic_cast<ActionMetadata*>(&item)) {
      block = m->block_id();
      box = g->block(block).interior;
    } else {
      throw Error::format(
          "plan stage '{}': item {} is neither a tile, a block nor action metadata: give the stage's "
          "teams one of those",
          name, item.describe());
    }
    for (const ActionBody& body : bodies) body(*g, block, box);
  });
  return routine.declared(std::move(declaration));
}

}  // namespace korch::plan
