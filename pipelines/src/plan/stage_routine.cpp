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

namespace {

// A device team's block: its reads made valid on the device, the device bodies, its writes left
// valid there alone (also when a body throws).
void run_on_device(const std::string& name, const DeviceStage& device, DataSource& source, const ActionContext& ctx,
                   int block) {
  DeviceResidency* residency = source.device_residency();
  if (!residency)
    throw Error::format(
        "plan stage '{}': device bodies need the blocks in device memory, but the {} keeps none: make the grid "
        "resident (GridSpec::resident) or list device arrays (BlockArray::on_device)",
        name, source.source_name());
  const std::vector<int> blocks{block};
  residency->begin_device_use(blocks, device.reads, device.writes, ctx.device_space());
  try {
    const DeviceBlockCells cells(residency->device_layout(block), source.block(block));
    const Box& box = source.block(block).interior;
    for (const DeviceActionBody& body : device.bodies) body(ctx, cells, box);
    ctx.device_space().fence();
  } catch (...) {
    residency->end_device_use(blocks, device.reads, device.writes);
    throw;
  }
  residency->end_device_use(blocks, device.reads, device.writes);
}

}  // namespace

ActionRoutine stage_routine(const std::string& name, std::vector<ActionBody> bodies, DataSource& source,
                            ActionDeclaration declaration) {
  return stage_routine(name, std::move(bodies), DeviceStage{}, source, std::move(declaration));
}

ActionRoutine stage_routine(const std::string& name, std::vector<ActionBody> bodies, DeviceStage device,
                            DataSource& source, ActionDeclaration declaration) {
  DataSource* g = &source;
  ActionRoutine routine(name, [bodies = std::move(bodies), device = std::move(device), g, name](
                                  const ActionContext& ctx, DataItem& item) {
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
      if (!device.bodies.empty()) return run_on_device(name, device, *g, ctx, block);
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
