// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The routine of one plan stage (docs/planner.md, "Plans and execution"): the stage's action bodies
// applied in order to the box of the item a team hands it (a tile, a block's interior, or for
// action metadata the interior of its block), declared with everything the actions read and write
// so that the runtime checks the plan. Shared by the Executor and by generated drivers.
#pragma once

#include <korch/action_context.hpp>
#include <korch/action_routine.hpp>
#include <korch/backend/spaces.hpp>
#include <korch/data_source.hpp>
#include <korch/device_residency.hpp>
#include <korch/plan/plan.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace korch::plan {

// Applies an action to the cells of `box` (block-local indices) of block `block`. Reads may reach
// `stencil` cells beyond the box; writes stay inside it.
using ActionBody = std::function<void(DataSource& source, int block, const Box& box)>;

// One block's cells in device memory, where the source keeps them between cycles (a resident
// korch::Grid, a BlockList of device arrays: docs/residency.md): each variable an (i, j, k) View
// over the block's stored cells, block-local indices, the block's own strides.
class DeviceBlockCells {
 public:
  using Cells = Kokkos::View<double***, Kokkos::LayoutStride, DeviceMemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  DeviceBlockCells(const DeviceBlockLayout& layout, const BlockMeta& meta) : layout_(layout), meta_(&meta) {}
  int block_id() const noexcept { return meta_->id; }
  const BlockMeta& meta() const noexcept { return *meta_; }
  // Variable `var` of the block (valid on the device while the body runs).
  Cells var(int var) const {
    const auto n = [this](int d) { return static_cast<std::size_t>(meta_->stored.hi[d] - meta_->stored.lo[d]); };
    const auto s = [this](int r) { return static_cast<std::size_t>(layout_.stride[static_cast<std::size_t>(r)]); };
    return Cells(layout_.data + static_cast<std::ptrdiff_t>(var) * layout_.stride[0],
                 Kokkos::LayoutStride(n(0), s(1), n(1), s(2), n(2), s(3)));
  }

 private:
  DeviceBlockLayout layout_;
  const BlockMeta* meta_;
};

// An action's device body: applies the action to `box` of the block with kernels on
// ctx.device_space() (fenced by the caller). Reads may reach `stencil` cells beyond the box.
using DeviceActionBody = std::function<void(const ActionContext& ctx, const DeviceBlockCells& block, const Box& box)>;

// The device side of a stage: the device bodies of its actions in order, and the source variables
// the stage reads and writes (what must be valid on the device before, and is there alone after).
struct DeviceStage {
  std::vector<DeviceActionBody> bodies;
  std::vector<int> reads, writes;
};

// The union of the stage's actions' declarations under the stage's routine name (a variable read
// by several actions keeps its widest stencil).
ActionDeclaration stage_declaration(const Plan& plan, const Stage& stage);

// The stage routine `name`: `bodies` in order on each item's box of `source`, declared `declaration`.
// An item of another kind is an error naming it.
ActionRoutine stage_routine(const std::string& name, std::vector<ActionBody> bodies, DataSource& source,
                            ActionDeclaration declaration);
// The same, with device bodies for the items of device teams (action metadata): each such block's
// reads are made valid in the source's device copy, the device bodies run on it, and its writes are
// valid there alone afterwards (DeviceResidency). Throws korch::Error at the first such item when
// the source keeps no device copy.
ActionRoutine stage_routine(const std::string& name, std::vector<ActionBody> bodies, DeviceStage device,
                            DataSource& source, ActionDeclaration declaration);

}  // namespace korch::plan
