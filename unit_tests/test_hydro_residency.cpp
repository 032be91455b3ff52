// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-hydro keeps its blocks on the device between steps (docs/residency.md): after the first
// step the device configuration moves no state, the split one only what changes side, and a
// random sequence of configurations, outputs, checkpoints and restarts ends in the state of a run
// that keeps everything on the host.
#include "options.hpp"
#include "simulation.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <array>
#include <cstdint>
#include <filesystem>
#include <random>
#include <memory>
#include <string>
#include <vector>

using namespace korch;
using namespace korch::hydro;

namespace {

// The state hash after each of `steps` steps of a run that keeps everything on the host (one
// korch::Runtime exists at a time, so the reference runs first).
std::vector<std::uint64_t> host_hashes(const Options& o, int steps) {
  Simulation reference(o);
  std::vector<std::uint64_t> hashes;
  for (int s = 0; s < steps; ++s) {
    reference.step();
    hashes.push_back(reference.state_hash());
  }
  return hashes;
}

Options sedov_run(HydroConfiguration config) {
  Options o;
  // The halves of the built-in: shares by throughput would move blocks between the sides whenever
  // the measured rates change them (docs/configurations.md, "Distribution by throughput").
  o.split_even = config == HydroConfiguration::split;
  o.blocks = 3;
  o.cells_per_block = 12;
  o.threads = 1;
  o.quiet = true;
  o.write_output = false;
  o.config = config;
  return o;
}

}  // namespace

TEST_CASE("hydro residency: after the first step, device moves no state and split only what changes side") {
  const auto reference = host_hashes(sedov_run(HydroConfiguration::cpu), 6);
  for (const auto config : {HydroConfiguration::device, HydroConfiguration::split}) {
    CAPTURE(builtin_name(config));
    Simulation sim(sedov_run(config));
    sim.step();
    const double first = sim.state_bytes();
    CHECK(first > 0);  // the first step stages the initial state of the device's blocks
    for (int s = 1; s < 6; ++s) {
      sim.step();
      CHECK(sim.state_bytes() == first);
    }
    // Every block on the device fills on the device; split stages the cells between its sides.
    if (config == HydroConfiguration::device) CHECK(sim.halo_bytes() == 0);
    if (config == HydroConfiguration::split) CHECK(sim.halo_bytes() > 0);
    CHECK(sim.output_bytes() == 0);
    // An output between steps brings the device's blocks back, counted as output, not as state.
    CHECK(sim.state_hash() == reference.back());
    const double moved = sim.transfer_bytes();
    sim.step();
    CHECK(sim.output_bytes() > 0);
    CHECK(sim.transfer_bytes() >= moved + sim.output_bytes());
  }
}

TEST_CASE("hydro residency: configurations, outputs, checkpoints and restarts in any order never read a stale copy") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("korch-test-hydro-residency-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string checkpoint = (dir / "checkpoint.bin").string();
  const std::array<HydroConfiguration, 4> configs = {HydroConfiguration::cpu, HydroConfiguration::device,
                                                     HydroConfiguration::split, HydroConfiguration::action_parallel};
  for (const unsigned seed : {3u, 11u}) {
    CAPTURE(seed);
    std::mt19937 random(seed);
    const Options start = sedov_run(HydroConfiguration::device);
    const auto reference = host_hashes(sedov_run(HydroConfiguration::cpu), 14);
    auto sim = std::make_unique<Simulation>(start);
    for (int s = 0; s < 14; ++s) {
      CAPTURE(s);
      const unsigned what = random() % 5;
      if (what == 0) sim->set_configuration(configs[random() % configs.size()]);
      if (what == 1) CHECK(sim->totals()[0] > 0);  // reads every block on the host
      if (what == 2) sim->write_checkpoint(checkpoint);
      if (what == 3) {
        sim->write_checkpoint(checkpoint);
        Options o = start;
        o.restart = checkpoint;
        sim.reset();
        sim = std::make_unique<Simulation>(o);
      }
      sim->step();
      if (what == 4) REQUIRE(sim->state_hash() == reference[static_cast<std::size_t>(s)]);
    }
    CHECK(sim->state_hash() == reference.back());
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("hydro residency: the trace carries each step's bytes by kind, as the summary counts them") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("korch-test-hydro-trace-bytes-" + std::to_string(::getpid()));
  Options o = sedov_run(HydroConfiguration::device);
  o.write_output = true;
  o.out = dir.string();
  o.trace_cycles = 4;
  Simulation sim(o);
  for (int s = 0; s < 4; ++s) sim.step();
  const double totals = sim.totals()[0];  // an output between steps: read by the next step's counter
  CHECK(totals > 0);
  sim.step();
  // The kept cycles are steps 2-5: the device's blocks stay there, so no state moves, and only the
  // last step follows an output.
  std::vector<std::pair<std::string, std::uint64_t>> samples;
  for (const TraceEvent& e : sim.last_events())
    if (is_bytes_counter(e)) samples.emplace_back(e.name, e.bytes);
  REQUIRE(samples.size() == 4 * 3);
  for (std::size_t k = 0; k < samples.size(); ++k) {
    CAPTURE(k);
    const bool last_step = k >= samples.size() - 3;
    if (samples[k].first == "state" || samples[k].first == "halo") CHECK(samples[k].second == 0);
    if (samples[k].first == "output") CHECK((samples[k].second > 0) == last_step);
  }
  CHECK(static_cast<double>(samples.back().second) == sim.output_bytes());
  std::filesystem::remove_all(dir);
}
