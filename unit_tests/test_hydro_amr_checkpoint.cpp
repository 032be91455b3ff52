// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Checkpoints of the adaptive hydro job: the mesh and state of a run that regrids continue bitwise
// to the uninterrupted run's; leaves outside the mesh, or leaves that are not a balanced tree, are
// refused naming the file, even with a fresh checksum; other regrid options are refused naming
// the option.
#include "amr_simulation.hpp"
#include "test_hydro_checkpoint_support.hpp"

#include <korch/config.hpp>

#include <cstring>
#include <string>

using namespace korch;
using namespace korch::hydro;
using namespace korch::hydro::checkpoint_test;

namespace {

Options adaptive_run(int steps, double conduction = 0) {
  Options o;
  o.conduction = conduction;
  o.max_level = 2;
  o.blocks = 3;
  o.cells_per_block = 8;
  o.regrid_every = 2;
  o.threads = 1;
  o.steps = steps;
  o.quiet = true;
  o.write_output = false;
  return o;
}

// The adaptive run's checkpoint after `steps` steps, at `path`.
void write_adaptive_checkpoint(int steps, const std::string& path, double conduction = 0) {
  AmrSimulation sim(adaptive_run(steps, conduction));
  sim.run();
  sim.write_checkpoint(path);
}

}  // namespace

TEST_CASE("hydro amr checkpoint: a run that regrids continues bitwise from its checkpoint") {
  const fs::path dir = scratch("amr-continue");
  const std::string path = (dir / "checkpoint.bin").string();
  // With conduction too: the composite mesh's solve after every step.
  for (double conduction : {0.0, KORCH_HAVE_KOKKOSKERNELS ? 0.02 : 0.0}) {
    INFO("conduction " << conduction);
    std::uint64_t uninterrupted = 0;
    std::vector<int> levels;
    {
      AmrSimulation sim(adaptive_run(11, conduction));
      sim.run();
      uninterrupted = sim.state_hash();
      levels = sim.leaves_per_level();
    }
    write_adaptive_checkpoint(5, path, conduction);
    const CheckpointContent c = read_checkpoint_file(path, adaptive_run(11, conduction));
    CHECK(c.max_level == 2);
    CHECK(c.leaves.size() > 9);  // refined beyond the 3^2 roots
    CHECK(c.state[0].size() == c.leaves.size() * 64);
    Options o = adaptive_run(11, conduction);
    o.restart = path;
    AmrSimulation sim(o);
    CHECK(sim.steps_done() == 5);
    sim.run();
    CHECK(sim.state_hash() == uninterrupted);
    CHECK(sim.leaves_per_level() == levels);
  }
  fs::remove_all(dir);
}

TEST_CASE("hydro amr checkpoint: damaged leaves and other regrid options are refused") {
  const fs::path dir = scratch("amr-refused");
  const std::string path = (dir / "checkpoint.bin").string();
  write_adaptive_checkpoint(3, path);
  const std::string bytes = read_bytes(path);
  const std::size_t keys = bytes.find("\nend\n") + 5;
  const Options o = adaptive_run(11);
  REQUIRE(refusal(path, o).empty());
  SUBCASE("a leaf beyond the finest level") {
    std::string edited = bytes;
    const std::int64_t level = 9;
    std::memcpy(&edited[keys], &level, sizeof level);
    write_bytes(path, resigned(edited));
    CHECK(refusal(path, o).find("outside an adaptive mesh") != std::string::npos);
  }
  SUBCASE("two leaves swapped: not the Morton order of a balanced tree") {
    std::string edited = bytes;  // each key is 32 bytes: level, x, y, z
    edited.replace(keys, 32, bytes.substr(keys + 32, 32));
    edited.replace(keys + 32, 32, bytes.substr(keys, 32));
    write_bytes(path, resigned(edited));
    Options restart = o;
    restart.restart = path;
    std::string message;
    try {
      AmrSimulation sim(restart);
    } catch (const Error& e) {
      message = e.what();
    }
    CHECK(message.find("not the leaves of a 2:1 balanced mesh") != std::string::npos);
  }
  SUBCASE("another refinement threshold or regrid interval") {
    Options other = o;
    other.refine_above = 0.7;
    CHECK(refusal(path, other).find("option --refine-above") != std::string::npos);
    other = o;
    other.regrid_every = 3;
    CHECK(refusal(path, other).find("option --regrid-every") != std::string::npos);
    other = o;
    other.max_level = 3;
    CHECK(refusal(path, other).find("option --max-level") != std::string::npos);
  }
  fs::remove_all(dir);
}
