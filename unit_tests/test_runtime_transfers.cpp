// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the runtime counts of its host <-> device copies (Runtime::last_transfers): nothing on host
// configurations; on the device ones, every block's staged data each way, each cycle, counted once.
#include "test_error_support.hpp"
#include "test_runtime_support.hpp"

#include <korch/configurations/builtin.hpp>
#include <korch/runtime.hpp>

using namespace korch;
using namespace korch::test;

namespace {

GridSpec transfer_spec() {
  GridSpec s;
  s.block_cells = {8, 6, 1};
  s.blocks = {3, 2, 1};
  s.guard = 1;
  s.guard_dims = 2;  // a 2-D grid: no z guard planes
  s.n_vars = 2;
  s.tile_cells = {4, 3, 1};
  return s;
}

Bundle plain_bundle(const Configuration& c) {
  Bundle b("transfers");
  for (const auto& team : c.teams) {
    if (!b.find(team.action)) b.add(ActionRoutine(team.action, [](const ActionContext&, DataItem&) {}));
  }
  return b;
}

}  // namespace

TEST_CASE("Runtime transfers: host configurations copy nothing; device ones stage every block each way, each cycle") {
  Runtime rt;
  Grid grid(transfer_spec());
  const std::uint64_t block_bytes = 10 * 8 * 1 * 2 * sizeof(double);  // (8+2) x (6+2) cells, 2 variables
  const std::uint64_t all_blocks = 6 * block_bytes;
  for (const char* name : {"cpu_only", "cpu_gpu_action_parallel"}) {
    CAPTURE(std::string(name));
    const Configuration c = configurations::get(name);
    rt.execute(plain_bundle(c), c, grid);
    if (std::string(name) == "cpu_only") CHECK(rt.last_transfers().total() == 0);
    // Its device team takes packets of tiles: the tiles' interiors, no guard cells.
    if (std::string(name) != "cpu_only") CHECK(rt.last_transfers().host_to_device >= 6 * 8 * 6 * 2 * sizeof(double));
  }
  const Configuration gpu = configurations::get("gpu_only");
  for (int cycle = 0; cycle < 3; ++cycle) {
    CAPTURE(cycle);
    rt.execute(plain_bundle(gpu), gpu, grid);
    const TransferBytes t = rt.last_transfers();
    CHECK(t.device_to_host == all_blocks);  // every variable is read and written: whole blocks back
    CHECK(t.host_to_device > all_blocks);   // the same, with each packet's entry metadata
    CHECK(t.host_to_device < all_blocks + 6 * 256);
    CHECK(t.device_to_device == 0);
  }
}
