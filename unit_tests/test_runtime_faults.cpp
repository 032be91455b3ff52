// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Faults inside the runtime (not in a user's routine): memory-pool exhaustion in the middle of a
// cycle, a throwing helper and a throwing distributor. Each must wind the cycle down like any other
// error: execute() throws the first error with a count of the others, every team and helper team is
// Idle, the pools balance, and the next cycle runs with exact results.
#include "test_error_support.hpp"
#include "test_runtime_support.hpp"
#include "test_thread_team_support.hpp"

#include <korch/configurations/builtin.hpp>
#include <korch/fault_injection.hpp>
#include <korch/runtime.hpp>

#include <atomic>
#include <stdexcept>
#include <string>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_runtime_faults {

using namespace korch;
using namespace korch::test;

namespace {

const Affine A{"A", 0, 0, 2.0, 0.0, 1.0};
const Affine B{"B", 1, 1, 3.0, 0.0, -1.0};
const Affine C{"C", 2, 2, 0.5, 0.0, 2.0};

GridSpec spec(std::array<int, 3> blocks = {3, 2, 2}) {
  GridSpec s;
  s.block_cells = {8, 8, 8};
  s.blocks = blocks;
  s.guard = 1;
  s.n_vars = 3;
  s.tile_cells = {4, 4, 4};
  return s;
}

// The bundle of the actions a configuration uses.
Bundle bundle_for(const Configuration& cfg, const std::vector<Affine>& actions = {A, B, C}) {
  Bundle b("faults");
  for (const Affine& a : actions) {
    for (const auto& t : cfg.teams) {
      if (t.action == a.name) {
        b.add(affine_routine(a, nullptr));
        break;
      }
    }
  }
  return b;
}

void check_wound_down(Runtime& rt) {
  CHECK(rt.pinned_pool().outstanding_bytes() == 0);
  CHECK(rt.device_pool().outstanding_bytes() == 0);
  for (unsigned i = 0; i < rt.options().n_teams; ++i) CHECK(rt.team(i).mode() == TeamMode::Idle);
  for (unsigned i = 0; i < rt.options().n_helpers; ++i) CHECK(rt.helper_team(i).mode() == TeamMode::Idle);
}

// The next cycle runs and gives the sequential result.
void check_next_cycle_exact(Runtime& rt, const std::string& config) {
  const Configuration cfg = configurations::get(config);
  std::vector<Affine> used;
  for (const Affine& a : {A, B, C}) {
    for (const auto& t : cfg.teams) {
      if (t.action == a.name) {
        used.push_back(a);
        break;
      }
    }
  }
  Grid grid(spec());
  fill_pattern(grid);
  Grid reference = grid.clone();
  apply_reference(reference, used);
  rt.execute(bundle_for(cfg), cfg, grid);
  CHECK(grid.max_interior_difference(reference) == 0.0);
  check_wound_down(rt);
}

// Runs one cycle of `cfg` on a fresh grid with the armed faults, disarms them, and returns the
// error's message ("" if the cycle succeeded).
std::string error_of_cycle(Runtime& rt, const Configuration& cfg) {
  Grid grid(spec());
  fill_pattern(grid);
  std::string message = error_of([&] { rt.execute(bundle_for(cfg), cfg, grid); });
  faults::disarm();
  return message;
}

struct Disarm {
  ~Disarm() { faults::disarm(); }
};

}  // namespace

TEST_CASE(
    "Runtime faults: a helper that throws on any item fails the cycle with the first error and a count of the others; "
    "the next cycle runs") {
  const Disarm disarm;
  Runtime rt;
  // Configurations independent of their action order (each action on its own variable).
  for (const char* config : {"gpu_only", "cpu_gpu_action_parallel", "hybrid_distributor"}) {
    for (const auto& when : std::vector<std::pair<int, int>>{{1, 0}, {3, 0}, {2, 1}}) {
      // Plain variables, not a structured binding: CAPTURE's lambda may not capture one in C++17.
      const int nth = when.first, every = when.second;
      CAPTURE(std::string(config));
      CAPTURE(nth);
      CAPTURE(every);
      const Configuration cfg = configurations::get(config);
      const std::uint64_t fired_before = faults::fired();
      faults::arm(faults::Point::helper_item, static_cast<std::uint64_t>(nth), static_cast<std::uint64_t>(every));
      const std::string message = error_of_cycle(rt, cfg);
      REQUIRE(faults::fired() > fired_before);
      CHECK(contains(message, "injected fault at helper_item"));
      CHECK(contains(message, "configuration '" + cfg.name + "' failed: team '"));
      check_wound_down(rt);
      check_next_cycle_exact(rt, config);
    }
  }
}

TEST_CASE(
    "Runtime faults: a failing helper and a failing action in one cycle: the first error is reported with the count of "
    "the other") {
  const Disarm disarm;
  Runtime rt;
  // Action parallel: the cpu team (action A) and the gpu pipeline's aggregator (to_gpu) both get
  // every block, so both fail, every time.
  const Configuration cfg = configurations::get("cpu_gpu_action_parallel");
  Bundle bundle("two faults");
  bundle.add(ActionRoutine("A", [](const ActionContext&, DataItem&) { throw std::runtime_error("action A failed"); }));
  bundle.add(affine_routine(B, nullptr));
  Grid grid(spec());
  fill_pattern(grid);
  faults::arm(faults::Point::helper_item, 1, 1);
  const std::string message = error_of([&] { rt.execute(bundle, cfg, grid); });
  faults::disarm();
  CHECK(contains(message, "(1 more errors)"));
  CHECK((contains(message, "action A failed") || contains(message, "injected fault at helper_item")));
  check_wound_down(rt);
  check_next_cycle_exact(rt, "cpu_gpu_action_parallel");
}

TEST_CASE(
    "Runtime faults: a distributor that throws mid-grid fails the cycle, closes every entry and the next cycle runs") {
  const Disarm disarm;
  Runtime rt;
  for (const char* config :
       {"cpu_only", "gpu_only", "cpu_gpu_data_parallel", "hybrid_distributor", "concurrent_itor"}) {
    for (const int nth : {1, 2, 3}) {
      CAPTURE(std::string(config));
      CAPTURE(nth);
      const Configuration cfg = configurations::get(config);
      const std::uint64_t fired_before = faults::fired();
      faults::arm(faults::Point::distributor_push, static_cast<std::uint64_t>(nth));
      const std::string message = error_of_cycle(rt, cfg);
      REQUIRE(faults::fired() == fired_before + 1);
      CHECK(contains(message, "failed in the distributor"));
      CHECK(contains(message, "injected fault at distributor_push"));
      check_wound_down(rt);
      check_next_cycle_exact(rt, config);
    }
  }
}

TEST_CASE(
    "Runtime faults: a device pool exhausted in the middle of a cycle fails it with the pool's error; the next cycle "
    "runs") {
  Runtime rt;
  // The device bytes of one packet: a grid of one packet (gpu_only packs 2 blocks).
  {
    Grid one(spec({2, 1, 1}));
    fill_pattern(one);
    rt.device_pool().reset_high_water();
    const Configuration cfg = configurations::get("gpu_only");
    rt.execute(bundle_for(cfg), cfg, one);
  }
  const std::size_t packet_bytes = rt.device_pool().high_water_bytes();
  REQUIRE(packet_bytes > 0);
  rt.device_pool().set_limit_bytes(2 * packet_bytes);
  // Each call of the action holds its packet until the aggregator (helper 0, to_gpu) has failed to
  // get another one, so the pool runs out in the middle of the cycle, after packets were made,
  // every time.
  ThreadTeam& to_gpu = rt.helper_team(0);
  Bundle bundle("exhaust");
  bundle.add(ActionRoutine(
      "A", [&](const ActionContext&, DataItem&) { eventually([&] { return to_gpu.snapshot().cycle.errors > 0; }); }));
  Grid grid(spec());
  fill_pattern(grid);
  rt.device_pool().reset_high_water();
  const std::string message = error_of([&] { rt.execute(bundle, configurations::get("gpu_only"), grid); });
  CHECK(rt.device_pool().high_water_bytes() >= packet_bytes);  // packets were made before it ran out
  CHECK(contains(message, "memory pool 'device' (device)"));
  CHECK(contains(message, "failed: team 'to_gpu' (id "));  // the pooled team carries its node's name
  check_wound_down(rt);
  rt.device_pool().set_limit_bytes(0);
  check_next_cycle_exact(rt, "gpu_only");
}

}  // namespace test_runtime_faults
