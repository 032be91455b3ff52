// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-hydro on an adaptive mesh (amr_simulation.hpp): the totals are kept across level jumps and
// regrids, the mesh follows a blast, configurations agree (action-parallel's diagnostics too), the
// sweep's face fluxes at level jumps are the kernel's, and options the adaptive run does not have
// are refused naming them.
#include "amr_hydro.hpp"
#include "amr_simulation.hpp"
#include "options.hpp"
#include "test_error_support.hpp"

#include <korch/backend/spaces.hpp>
#include <korch/bundle.hpp>
#include <korch/config.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <array>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace korch::hydro;
using korch::test::contains;
using korch::test::error_of;

namespace {

Options adaptive(Problem problem, int max_level) {
  Options o;
  o.problem = problem;
  o.threads = 1;
  o.blocks = 2;
  o.cells_per_block = 8;
  o.max_level = max_level;
  o.regrid_every = 2;
  o.quiet = true;
  o.write_output = false;
  return o;
}

double relative_change(double before, double after) { return std::abs(after - before) / std::abs(before); }

}  // namespace

TEST_CASE("hydro AMR: periodic Sod tubes across two levels keep mass, momentum and energy to round-off") {
  Options o = adaptive(Problem::sod_x, 2);
  o.boundary = Boundary::periodic;  // two jumps: at x = 0.5 and across the periodic edge
  o.blocks = 4;                     // room between them for coarse leaves
  AmrSimulation sim(o, korch::Communicator{});
  const auto before = sim.totals();
  const auto levels = sim.leaves_per_level();
  CHECK(levels.back() > 0);
  for (int step = 0; step < 30; ++step) {
    if (step > 0 && step % 2 == 0) sim.regrid();
    sim.step();
  }
  const auto after = sim.totals();
  CHECK(relative_change(before[0], after[0]) < 1e-13);
  CHECK(relative_change(before[4], after[4]) < 1e-13);
  CHECK(std::abs(after[1]) < 1e-13 * before[0]);  // at rest at first: the momentum stays zero
  CHECK(std::abs(after[2]) < 1e-13 * before[0]);
}

TEST_CASE("hydro AMR: Sedov's blast keeps mass and energy, and its front lies on the finest level") {
  Options o = adaptive(Problem::sedov, 2);
  o.blocks = 4;   // room for the front to cross blocks
  o.threads = 2;  // fills and updates of several leaves at once (ThreadSanitizer runs this)
  AmrSimulation sim(o, korch::Communicator{});
  const auto before = sim.totals();
  int changes = 0;
  for (int step = 0; step < 150; ++step) {
    if (step > 0 && step % 4 == 0) {
      const auto counts = sim.regrid();
      changes += counts.refined + counts.derefined;
    }
    sim.step();
  }
  CHECK(changes > 0);  // the mesh followed the front
  const auto after = sim.totals();
  CHECK(relative_change(before[0], after[0]) < 1e-13);
  CHECK(relative_change(before[4], after[4]) < 1e-12);
  // The densest cell (the front) is in a leaf of the finest level.
  const auto rho = sim.density_on_finest_lattice();
  std::size_t densest = 0;
  for (std::size_t c = 0; c < rho.size(); ++c)
    if (rho[c] > rho[densest]) densest = c;
  CHECK(rho[densest] > 1.5);
  const auto& s = sim.mesh().shape();
  const std::int64_t n = std::int64_t{s.forest.roots[0]} * s.cells[0] << s.forest.max_level;
  const std::int64_t x = static_cast<std::int64_t>(densest) % n, y = static_cast<std::int64_t>(densest) / n;
  bool finest = false;
  for (const auto& leaf : sim.mesh().forest().leaves()) {
    const std::int64_t f = std::int64_t{1} << (s.forest.max_level - leaf.level);
    const bool in = x / f / s.cells[0] == leaf.position[0] && y / f / s.cells[1] == leaf.position[1];
    if (in) finest = leaf.level == s.forest.max_level;
  }
  CHECK(finest);
  // Far from the blast the mesh stays coarse: fewer cells than the finest level everywhere.
  const std::int64_t cells = sim.mesh().forest().n_leaves() * s.cells[0] * s.cells[1];
  CHECK(cells < n * n);
}

// On a GPU the device's arithmetic may round differently (fused multiply-adds): there the totals
// agree to round-off instead.
// cpu_only's step fills each leaf's guard cells and finds its time step inside the update (the
// cells beside finer leaves after the flux correction), gpu_only's in a fill cycle before it: with
// regrids that change the leaves and regrids that keep them, both take the same steps; the
// estimates a step finds for the regrid after it are the same on both.
TEST_CASE("hydro AMR: cpu_only and gpu_only give the same state, bit for bit where the device is the host") {
  Options o = adaptive(Problem::sod_x, 2);
  int wrong_dts = 0;
  const auto run = [&wrong_dts](AmrSimulation& sim, int& changed) {
    for (int step = 0; step < 80; ++step) {
      // Regrids on the current state's estimates (a fill cycle) and on those a step found of the
      // state it read (cpu_only's update, gpu_only's fill cycle).
      const bool estimate_in_step = step % 4 == 2;
      if (step % 4 == 1) {
        const korch::RegridCounts c = sim.regrid();
        changed += c.refined + c.derefined > 0;
      }
      sim.step(1e300, estimate_in_step);
      if (estimate_in_step) {
        const korch::RegridCounts c = sim.regrid_on_step_estimates();
        changed += c.refined + c.derefined > 0;
      }
      // Each leaf's dt for the next step is its dt worked out afresh from the corrected state.
      EulerParams p;
      p.gamma = sim.options().gamma;
      p.dim = sim.options().dim;
      p.state = sim.state();
      const std::vector<double> dts = sim.leaf_dts();
      if (dts.size() != sim.mesh().own_leaves().size()) ++wrong_dts;
      for (int b = 0; b < static_cast<int>(dts.size()); ++b)
        wrong_dts += dts[static_cast<std::size_t>(b)] != amr_leaf_dt(sim.mesh(), b, p);
    }
  };
  std::uint64_t cpu_hash = 0;
  std::array<double, 5> cpu_totals{};
  int changed = 0;
  {
    AmrSimulation cpu(o, korch::Communicator{});  // one korch::Runtime at a time
    run(cpu, changed);
    cpu_hash = cpu.state_hash();
    cpu_totals = cpu.totals();
  }
  CHECK(changed > 0);
  CHECK(changed < 40);  // and regrids that kept them
  CHECK(wrong_dts == 0);
  o.config = HydroConfiguration::device;
  AmrSimulation device(o, korch::Communicator{});
  run(device, changed);
  if (korch::device_is_accelerator) {
    CHECK(relative_change(cpu_totals[0], device.totals()[0]) < 1e-13);
    CHECK(relative_change(cpu_totals[4], device.totals()[4]) < 1e-12);
  } else {
    CHECK(device.state_hash() == cpu_hash);
  }
}

TEST_CASE("hydro AMR: cpu_gpu_action_parallel updates as cpu_only does, its device team measuring each leaf") {
  Options o = adaptive(Problem::sod_x, 2);
  o.steps = 12;
  std::uint64_t cpu_hash = 0;
  {
    AmrSimulation cpu(o, korch::Communicator{});
    cpu.run();
    cpu_hash = cpu.state_hash();
  }
  o.config = HydroConfiguration::action_parallel;
  AmrSimulation sim(o, korch::Communicator{});
  CHECK(contains(error_of([&sim] { (void)sim.diagnostics(); }), "after 0 steps"));
  sim.run();
  if (!korch::device_is_accelerator) CHECK(sim.state_hash() == cpu_hash);
  // The state the last step read: the same mass (the tube's ends stay at rest), Sod's two densities.
  const BlockDiagnostics d = sim.diagnostics();
  CHECK(relative_change(sim.totals()[0], d.mass) < 1e-12);
  CHECK(d.rho_min == doctest::Approx(0.125).epsilon(1e-12));
  CHECK(d.rho_max == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(contains(sim.summary(), "the device team's diagnostics of the last step's state: mass"));
}

TEST_CASE("hydro AMR: --tile updates tiles of the leaves, the state cpu_only's on whole leaves bit for bit") {
  for (int dim : {2, 3}) {
    Options o = adaptive(Problem::sedov, dim == 2 ? 2 : 1);
    o.dim = dim;
    o.steps = dim == 2 ? 12 : 6;
    std::uint64_t whole = 0;
    {
      AmrSimulation sim(o, korch::Communicator{});
      sim.run();
      whole = sim.state_hash();
    }
    o.tile = 3;  // tiles of 3, 3 and 2 cells along each axis of a leaf of 8
    AmrSimulation tiled(o, korch::Communicator{});
    tiled.run();
    INFO("dim " << dim);
    CHECK(tiled.state_hash() == whole);
    CHECK(!contains(tiled.summary(), "with each leaf's guard fill"));  // one fill cycle per step instead
  }
}

TEST_CASE("hydro AMR --plan: the plan's steps give cpu_only's state bit for bit, in 2D and 3D, on tiles") {
  struct Variant {
    int dim, tile;
    double conduction;
  };
  const bool conduction = KORCH_HAVE_KOKKOSKERNELS != 0;
  for (const Variant v :
       {Variant{2, 0, 0.0}, Variant{3, 0, 0.0}, Variant{2, 4, 0.0}, Variant{2, 0, conduction ? 0.02 : 0.0}}) {
    INFO("dim " << v.dim << " tile " << v.tile << " conduction " << v.conduction);
    Options o = adaptive(Problem::sedov, 2);
    o.dim = v.dim;
    o.conduction = v.conduction;
    o.steps = 6;
    std::uint64_t by_hand = 0;
    {
      AmrSimulation sim(o, korch::Communicator{});  // one korch::Runtime at a time
      sim.run();
      by_hand = sim.state_hash();
    }
    o.operation = "builtin";
    o.tile = v.tile;
    AmrSimulation planned(o, korch::Communicator{});
    planned.run();
    CHECK(planned.state_hash() == by_hand);
    // The plan's diagnostics: the mass of the state the last step read, with each leaf's cell volume.
    CHECK(planned.diagnostics().mass == doctest::Approx(planned.totals()[0]).epsilon(1e-12));
    CHECK(contains(planned.summary(), "configuration plan of the built-in operation"));
  }
}

TEST_CASE("hydro AMR: a regrid on a step's estimates needs a step that found them, once") {
  AmrSimulation sim(adaptive(Problem::sedov, 2), korch::Communicator{});
  const auto refused = [&sim] { return error_of([&sim] { sim.regrid_on_step_estimates(); }); };
  CHECK(contains(refused(), "the last step did not find them"));
  sim.step(1e300, true);
  sim.regrid_on_step_estimates();
  CHECK(contains(refused(), "give step(dt, true) first, or call regrid()"));  // used once
  sim.step(1e300, true);
  sim.step();
  CHECK(contains(refused(), "the last step did not find them"));  // the next step's state moved on
  sim.regrid();
  CHECK(contains(refused(), "the last step did not find them"));
}

TEST_CASE("hydro AMR: options the adaptive run does not have are refused, naming them") {
  Options o = adaptive(Problem::sedov, 2);
  o.cells_per_block = 7;
  CHECK(contains(error_of([&] { validate(o); }), "option --cells-per-block: 7 with --max-level"));
  o = adaptive(Problem::sedov, 2);
  o.refine_above = 0.1;
  o.derefine_below = 0.3;
  CHECK(contains(error_of([&] { validate(o); }), "--derefine-below 0.3 and --refine-above 0.1"));
  CHECK(contains(error_of([] {
                   parse_options({"--refine-above", "0.5"});
                 }),
                 "option --refine-above makes no sense without --max-level"));
  CHECK(contains(error_of([] { AmrSimulation sim(Options{}, korch::Communicator{}); }), "--max-level 0"));
}

TEST_CASE("hydro AMR: --inject-failure names a leaf along the Morton curve, and one that is not there is refused") {
  Options o = adaptive(Problem::sedov, 2);
  o.inject_failure = 64;  // 2 x 2 roots, two levels: at most 64 leaves
  CHECK(contains(error_of([&] { validate(o); }), "leaf 64 does not exist: the mesh has at most 64 leaves"));
  o.inject_failure = 63;
  validate(o);
  {
    AmrSimulation sim(o, korch::Communicator{});
    const auto leaves = sim.mesh().forest().n_leaves();
    REQUIRE(leaves < 63);
    CHECK(contains(error_of([&sim] { sim.step(); }), "leaf 63 does not exist: the mesh has leaves 0.." +
                                                         std::to_string(leaves - 1) + " at the first step"));
  }
  o.inject_failure = 3;
  AmrSimulation sim(o, korch::Communicator{});
  const std::string error = error_of([&sim] { sim.step(); });
  CHECK(contains(error, "action routine 'hydro' threw"));
  CHECK(contains(error, "injected failure (--inject-failure 3): leaf 3 of the Morton curve"));
}

// The sweep hands the fluxes through a leaf's faces at level jumps to the mesh as it updates; the
// record cycle (for packets on a device) computes them with the kernel's face arithmetic. Both must
// give the same bits, or the correction would differ between configurations.
TEST_CASE("hydro AMR: the fluxes the sweep records at level jumps are the kernel's, bit for bit") {
  Options o = adaptive(Problem::sedov, 2);
  o.dim = 2;
  korch::ForestMeshShape shape;
  shape.forest = {2, {3, 3, 1}, {false, false, false}, 2};  // the blast in the middle root only
  shape.cells = {8, 8, 1};
  shape.guard = {guard_cells, guard_cells, 0};
  shape.n_vars = n_grid_vars;
  korch::ForestMesh mesh("sedov", shape);
  set_amr_initial_state(mesh, o);
  korch::RegridOptions regrid;
  regrid.vars = {0, 4};
  mesh.regrid(regrid);
  set_amr_initial_state(mesh, o);
  mesh.fill_guard_cells();
  REQUIRE(mesh.forest().leaves_per_level().size() > 1);  // there are level jumps

  EulerParams p;
  p.gamma = o.gamma;
  p.dim = 2;
  p.dt = 1e-4;
  p.state = 0;
  p.next_state = var_new;
  std::vector<unsigned char> recorded(mesh.own_leaves().size(), 0);
  korch::Runtime runtime(korch::RuntimeOptions{});
  korch::Bundle bundle("hydro step", korch::ActionParameters(AmrStepParameters{p, &mesh, recorded.data()}));
  bundle.add(amr_hydro_routine());
  korch::Configuration cpu = korch::configurations::get("cpu_only");
  cpu.teams[0].action = "hydro";
  runtime.execute(bundle, cpu, mesh.blocks());

  int jumps = 0;
  for (int b = 0; b < static_cast<int>(mesh.own_leaves().size()); ++b) {
    CHECK(recorded[static_cast<std::size_t>(b)] == 1);
    std::vector<std::vector<double>> swept;
    for (int axis = 0; axis < 2; ++axis)
      for (int side = 0; side < 2; ++side)
        swept.emplace_back(mesh.face_flux(b, axis, side), mesh.face_flux(b, axis, side) + n_grid_vars * 8);
    record_face_fluxes(mesh, p, b);
    for (int axis = 0; axis < 2; ++axis)
      for (int side = 0; side < 2; ++side) {
        const auto kind = mesh.face_neighbour(b, axis, side);
        if (kind != korch::ForestNeighbour::Kind::coarser && kind != korch::ForestNeighbour::Kind::finer) continue;
        ++jumps;
        const double* kernel = mesh.face_flux(b, axis, side);
        const std::vector<double>& sweep = swept[static_cast<std::size_t>(2 * axis + side)];
        for (std::size_t n = 0; n < sweep.size(); ++n) CHECK(sweep[n] == kernel[n]);
      }
  }
  CHECK(jumps > 0);
}
