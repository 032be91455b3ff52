// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The plain resident step korch-bench-hydro measures the device configurations against
// (docs/benchmarks.md): guard fill, per-direction fluxes over all blocks, update and time step on
// the device without the runtime give the bits of korch-hydro's steps, in 2D and 3D, periodic and
// outflow.
#include "options.hpp"
#include "plain_resident_step.hpp"
#include "simulation.hpp"

#include <korch/error.hpp>

#include <doctest/doctest.h>

#include <cstring>

using namespace korch;
using namespace korch::hydro;

namespace {

Options small_run(int dim, Boundary boundary, HydroConfiguration config) {
  Options o;
  o.dim = dim;
  o.blocks = dim == 3 ? 2 : 3;
  o.cells_per_block = dim == 3 ? 6 : 10;
  o.threads = 1;
  o.quiet = true;
  o.write_output = false;
  o.boundary = boundary;
  o.config = config;
  return o;
}

// Every interior cell of the current state of both grids, bit for bit.
bool same_state(const Grid& a, const Grid& b, int state_a, int state_b) {
  const auto x = a.data();
  const auto y = b.data();
  for (const auto& m : a.blocks())
    for (int v = 0; v < n_cons; ++v)
      for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
        for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
          for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k) {
            const double p = x(m.id, state_a + v, i, j, k), q = y(m.id, state_b + v, i, j, k);
            if (std::memcmp(&p, &q, sizeof p) != 0) return false;
          }
  return true;
}

}  // namespace

TEST_CASE("plain resident step: the bits of korch-hydro's steps, its own guard fill and time step") {
  for (const int dim : {2, 3})
    for (const Boundary boundary : {Boundary::periodic, Boundary::outflow}) {
      CAPTURE(dim);
      CAPTURE(boundary == Boundary::periodic);
      Simulation sim(small_run(dim, boundary, HydroConfiguration::device));
      const BoundaryKind edge = boundary == Boundary::periodic ? BoundaryKind::periodic : BoundaryKind::outflow;
      PlainResidentStep plain(sim.grid(), {edge, edge, edge});
      Grid seen(sim.grid().spec());
      for (int step = 0; step < 4; ++step) {
        CAPTURE(step);
        // The same stable dt from the same state, then the step korch-hydro takes with it.
        plain.fill_guards();
        const double plain_dt = plain.stable_dt(sim.euler_params(0.0));
        CHECK(sim.options().cfl * plain_dt == sim.stable_dt());
        const double dt = sim.step();
        plain.update(sim.euler_params(dt));
        plain.copy_to(seen);
        CHECK(same_state(sim.grid(), seen, sim.euler_params(0.0).state, plain.state()));
      }
    }
}

TEST_CASE("plain resident step: a rank's share of a grid is refused") {
  GridSpec spec;
  spec.block_cells = {8, 8, 1};
  spec.blocks = {2, 2, 1};
  spec.guard = 2;
  spec.guard_dims = 2;
  spec.n_vars = n_grid_vars;
  spec.owned_blocks = {0, 1};
  const Grid part(spec);
  CHECK_THROWS_WITH_AS(
      PlainResidentStep(part, {BoundaryKind::periodic, BoundaryKind::periodic, BoundaryKind::periodic}),
      doctest::Contains("holds some of the blocks only"), Error);
}
