// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hydro run from the planner's plan (docs/planner.md, "Hydro as an operation"): the built-in
// operation's plan, the state it gives against the hand-bundled step, and the errors of its
// options and operation files.
#include "hydro_operation.hpp"
#include "options.hpp"
#include "simulation.hpp"

#include <korch/error.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace korch;
using namespace korch::hydro;

namespace {

Options small(int dim, Problem problem = Problem::sedov) {
  Options o;
  o.problem = problem;
  o.dim = dim;
  o.threads = 2;
  o.blocks = dim == 3 ? 2 : 3;
  o.cells_per_block = dim == 3 ? 8 : 16;
  o.quiet = true;
  o.write_output = false;
  return o;
}

struct Run {
  std::vector<double> dts;
  std::vector<std::vector<double>> state;  // the current state's interior, variable by variable
  std::uint64_t hash = 0;
  double time = 0;
};

// `steps` steps of one Simulation (one korch::Runtime exists at a time: the runs take turns).
Run run(const Options& o, int steps) {
  Simulation sim(o);
  REQUIRE((sim.operation() != nullptr) == !o.operation.empty());
  Run r;
  for (int s = 0; s < steps; ++s) r.dts.push_back(sim.step());
  for (int v = 0; v < n_cons; ++v) r.state.push_back(sim.gather(v));
  r.hash = sim.state_hash();
  r.time = sim.time();
  return r;
}

bool same_bits(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

// Every step's dt and the final state, bit for bit.
void check_plan_matches_hand_bundled(Options o, int steps) {
  const Run hand = run(o, steps);
  o.operation = "builtin";
  const Run planned = run(o, steps);
  CHECK(same_bits(planned.dts, hand.dts));
  CHECK(planned.time == hand.time);
  CHECK(planned.hash == hand.hash);
  for (int v = 0; v < n_cons; ++v)
    CHECK(same_bits(planned.state[static_cast<std::size_t>(v)], hand.state[static_cast<std::size_t>(v)]));
}

std::string write_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("korch-test-hydro-plan-" + name + ".json");
  std::ofstream(path) << text;
  return path.string();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE(
    "hydro plan: the built-in operation is planned as fill, one bundle (update+cell_dt | diagnostics), time_step") {
  Options o = small(2);
  o.operation = "builtin";
  Simulation sim(o);
  const plan::Plan& p = sim.operation()->plan();
  // The guard fill comes from hydro_update's stencil reads, not from a barrier in the file.
  REQUIRE(p.steps.size() == 3);
  CHECK(p.steps[0].kind == plan::StepKind::guard_fill);
  CHECK(p.steps[0].variables.size() == 5);
  REQUIRE(p.steps[1].kind == plan::StepKind::bundle);
  const auto& pipelines = p.steps[1].bundle.pipelines;
  REQUIRE(pipelines.size() == 2);            // diagnostics reads the current density only: independent of the update
  REQUIRE(pipelines[0].stages.size() == 1);  // cell_dt is short: fused with the update it reads
  CHECK(pipelines[0].stages[0].routine == "hydro_update+cell_dt");
  CHECK(pipelines[1].stages[0].routine == "diagnostics");
  for (const auto& q : pipelines) CHECK(q.device_teams.empty());
  CHECK(pipelines[0].host_type == DataType::tile);  // as the hand-bundled cpu team (whole-block tiles here)
  CHECK(pipelines[1].host_type == DataType::block);
  CHECK(p.steps[2].kind == plan::StepKind::reduction);
  CHECK(p.steps[2].name == "time_step");
}

TEST_CASE("hydro plan: with conduction the conduction reduction stays in the plan, after time_step") {
  Options o = small(2, Problem::wave);
  o.conduction = 1e-3;
  o.operation = "builtin";
  Simulation sim(o);
  const plan::Plan& p = sim.operation()->plan();
  REQUIRE(p.steps.size() == 4);
  CHECK(p.steps[3].kind == plan::StepKind::reduction);
  CHECK(p.steps[3].name == "conduction");
}

TEST_CASE("hydro plan: 2D Sedov from the plan is bitwise the hand-bundled step, every dt and the final state") {
  check_plan_matches_hand_bundled(small(2), 12);
}

TEST_CASE("hydro plan: 3D Sedov from the plan is bitwise the hand-bundled step, every dt and the final state") {
  check_plan_matches_hand_bundled(small(3), 6);
}

TEST_CASE("hydro plan: a tiled run from the plan is bitwise the hand-bundled tiled run, every dt and the final state") {
  Options o = small(2);
  o.tile = 8;  // four tiles per block
  check_plan_matches_hand_bundled(o, 10);
  Options three = small(3);
  three.tile = 4;
  check_plan_matches_hand_bundled(three, 4);
}

TEST_CASE("hydro plan: --tile with an operation that declares no action on tiles is an error naming --tile") {
  Options o = small(2);
  o.tile = 8;
  std::string text = builtin_operation_json();
  for (int n = 0; n < 2; ++n) text = replaced(text, "\"data_type\": \"tile\"", "\"data_type\": \"block\"");
  o.operation = write_file("blocks-only", text);
  CHECK_THROWS_WITH_AS(Simulation{o}, doctest::Contains("option --tile 8"), Error);
  o.tile = 0;
  CHECK(Simulation{o}.operation() != nullptr);  // whole blocks: the same file runs
}

// Implicit conduction needs Kokkos Kernels, which a user's own Kokkos may come without.
TEST_CASE("hydro plan: 2D sound wave with conduction from the plan is bitwise the hand-bundled step" *
          doctest::skip(KORCH_HAVE_KOKKOSKERNELS == 0)) {
  Options o = small(2, Problem::wave);
  o.conduction = 1e-3;
  check_plan_matches_hand_bundled(o, 5);
}

TEST_CASE("hydro plan: the diagnostics action gives the action-parallel configuration's per-block mass, min and max") {
  Options o = small(2);
  o.config = HydroConfiguration::action_parallel;
  std::vector<BlockDiagnostics> hand;
  {
    Simulation sim(o);
    for (int s = 0; s < 4; ++s) sim.step();
    hand = sim.diagnostics();
  }
  o.config = HydroConfiguration::cpu;
  o.operation = "builtin";
  Simulation sim(o);
  for (int s = 0; s < 4; ++s) sim.step();
  const std::vector<BlockDiagnostics>& planned = sim.diagnostics();
  REQUIRE(hand.size() == planned.size());
  for (std::size_t b = 0; b < hand.size(); ++b) {
    // The mass is a sum: the device team's Kokkos reduction may add in another order.
    CHECK(std::abs(planned[b].mass - hand[b].mass) <= 1e-13 * std::abs(hand[b].mass));
    CHECK(planned[b].rho_min == hand[b].rho_min);
    CHECK(planned[b].rho_max == hand[b].rho_max);
  }
}

TEST_CASE(
    "hydro plan: steps switched between the plan and the hand-bundled step give the same bits as either alone, the "
    "plan made once") {
  Options o = small(2);
  const Run hand = run(o, 8);
  Simulation sim(o);
  const HydroOperation* planned = nullptr;
  for (int s = 0; s < 8; ++s) {
    sim.set_operation(s % 2 == 0 ? "builtin" : "");
    CHECK((sim.operation() != nullptr) == (s % 2 == 0));
    if (s == 0) planned = sim.operation();
    if (s % 2 == 0) CHECK(sim.operation() == planned);  // switched back to as planned, not planned again
    sim.step();
  }
  CHECK(sim.time() == hand.time);
  CHECK(sim.state_hash() == hand.hash);
  CHECK_THROWS_WITH_AS(sim.set_operation("/nonexistent/hydro.json"), doctest::Contains("cannot be read"), Error);
}

TEST_CASE("hydro plan: --plan and --operation refuse options the plan does not use, naming them") {
  CHECK(parse_options({"--plan"}).operation == "builtin");
  const std::string file = write_file("options", builtin_operation_json());
  CHECK(parse_options({"--operation", file}).operation == file);
  CHECK_THROWS_WITH_AS(parse_options({"--operation", "/nonexistent/op.json"}), doctest::Contains("option --operation"),
                       Error);
  CHECK_THROWS_WITH_AS(parse_options({"--plan", "--config", "split"}),
                       doctest::Contains("--config cpu_gpu_data_parallel"), Error);
  CHECK(parse_options({"--plan", "--tile", "8"}).tile == 8);  // tiles of the actions declared on tiles
  CHECK_THROWS_WITH_AS(parse_options({"--plan", "--packet-blocks", "2"}), doctest::Contains("--packet-blocks"), Error);
  CHECK_THROWS_WITH_AS(parse_options({"--plan", "--inject-failure", "0"}), doctest::Contains("--inject-failure"),
                       Error);
  CHECK_THROWS_WITH_AS(parse_options({"--plan", "--operation", "op.json"}), doctest::Contains("--operation"), Error);
  CHECK_THROWS_WITH_AS(parse_options({"--operation", ""}), doctest::Contains("--operation"), Error);
}

TEST_CASE("hydro plan: a bad operation file stops the Simulation with an error naming the file and what is wrong") {
  Options o = small(2);
  o.operation = "/nonexistent/hydro.json";
  CHECK_THROWS_WITH_AS(Simulation{o}, doctest::Contains("'/nonexistent/hydro.json' cannot be read"), Error);
  const std::string builtin = builtin_operation_json();

  o.operation = write_file("variables", replaced(builtin, "[\"rho\", \"mx\",", "[\"mx\", \"rho\","));
  CHECK_THROWS_WITH_AS(Simulation{o}, doctest::Contains("field variables"), Error);

  o.operation = write_file("action", replaced(builtin, "\"name\": \"diagnostics\"", "\"name\": \"vorticity\""));
  CHECK_THROWS_WITH_AS(Simulation{o}, doctest::Contains("vorticity"), Error);

  o.operation = write_file("time-step", replaced(builtin, "\"name\": \"time_step\"", "\"name\": \"courant\""));
  CHECK_THROWS_WITH_AS(Simulation{o}, doctest::Contains("time_step"), Error);

  o.operation = write_file("parse", "{\"name\": \"hydro_step\", \"steps\": 3}");
  CHECK_THROWS_WITH_AS(Simulation{o}, doctest::Contains(o.operation.c_str()), Error);
}

TEST_CASE(
    "hydro plan: diagnostics handed a part of a block stops with an error naming the action; hydro_update takes "
    "tiles") {
  Options o = small(2);
  Simulation sim(o);
  HydroStepState state;
  state.euler = sim.euler_params(1e-4);
  std::vector<BlockDiagnostics> diagnostics(static_cast<std::size_t>(sim.grid().n_blocks()));
  state.diagnostics = diagnostics.data();
  const plan::ActionRegistry registry = hydro_action_registry(state, HydroStepHooks{});
  Box part = sim.grid().block(0).interior;
  part.hi[0] -= 4;
  CHECK_NOTHROW(registry.body("hydro_update")(sim.grid(), 0, part));
  CHECK_THROWS_WITH_AS(registry.body("diagnostics")(sim.grid(), 0, part),
                       doctest::Contains("hydro action 'diagnostics'"), Error);
  // The whole interior is accepted.
  registry.body("diagnostics")(sim.grid(), 0, sim.grid().block(0).interior);
  CHECK(diagnostics[0].rho_max >= diagnostics[0].rho_min);
}
