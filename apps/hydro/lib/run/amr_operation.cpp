// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro operation's action bodies on the leaves of an adaptive mesh (hydro_operation.hpp,
// amr_action_registry; docs/adaptive-mesh.md, "The hydro job").
#include "amr_hydro.hpp"
#include "hydro_operation.hpp"

#include <korch/error.hpp>

#include <utility>

namespace korch::hydro {

namespace {

const AmrStepParameters& adaptive_step(const HydroStepState& s, const char* action) {
  if (s.amr == nullptr || s.amr->mesh == nullptr)
    throw Error::format(
        "hydro action '{}' of an adaptive mesh: the step gave no mesh: run the operation through AmrSimulation",
        action);
  return *s.amr;
}

}  // namespace

plan::ActionRegistry amr_action_registry(HydroStepState& state, HydroStepHooks hooks) {
  HydroStepState* s = &state;
  plan::ActionRegistry registry;
  registry.add("hydro_update", [s](DataSource&, int block, const Box& box) {
    amr_update_leaf_box(adaptive_step(*s, "hydro_update"), block, box.lo.data(), box.hi.data());
  });
  // The flux correction after the plan changes the cells beside finer leaves: the fill cycle
  // before the next step finds the time step of the corrected state, so this has nothing to do.
  registry.add("cell_dt", [](DataSource&, int, const Box&) {});
  registry.add("diagnostics", [s](DataSource&, int block, const Box& box) {
    const ForestMesh& mesh = *adaptive_step(*s, "diagnostics").mesh;
    const ForestMeshShape& shape = mesh.shape();
    for (int d = 0; d < 3; ++d)
      if (box.lo[static_cast<std::size_t>(d)] != shape.guard[d] ||
          box.hi[static_cast<std::size_t>(d)] != shape.guard[d] + shape.cells[d])
        throw Error::format(
            "hydro action 'diagnostics': leaf {} came as a part of its interior; the action works on whole "
            "blocks: declare \"data_type\": \"block\" in the operation file",
            mesh.own_leaves()[static_cast<std::size_t>(block)].describe());
    s->diagnostics[block] = amr_leaf_diagnostics(mesh, block, s->euler.state);
  });
  add_step_hooks(registry, state, std::move(hooks));
  return registry;
}

}  // namespace korch::hydro
