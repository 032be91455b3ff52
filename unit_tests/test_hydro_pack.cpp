// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro update of a whole packet in a few launches (hydro_pack.hpp), which device packets run
// on CUDA and HIP builds, run here on the host: every kernel (face fluxes in the packet's scratch,
// fused, staged predictions and face fluxes) gives the same bits as the host sweep per block, in 2-D and 3-D, on a
// resident grid and on one whose packets carry copies, and the packet's stable dt.
#include "hydro_pack.hpp"
#include "options.hpp"
#include "simulation.hpp"

#include <korch/bundle.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>

#include <doctest/doctest.h>

#include <cstring>
#include <limits>
#include <mutex>
#include <vector>

using namespace korch;
using namespace korch::hydro;

namespace {

struct PackCase {
  int dim = 2;
  DeviceKernel kernel = DeviceKernel::faces;
  bool resident = false;
  int scratch = 0;  // scratch variables per packet entry
};

// gpu_only with `scratch` scratch variables in its packets.
Configuration gpu_only_with_scratch(int scratch) {
  Configuration c = configurations::get("gpu_only");
  for (auto& h : c.helpers) h.variables.scratch = scratch;
  return c;
}

struct PackResult {
  int different = 0;              // interior cells of the new state whose bits differ
  std::vector<DeviceKernel> ran;  // per packet, the kernels update_pack ran
};

// Runs one step of `c` on a packet-updated copy and on the host sweep, and checks the packets' dt
// against the cells'.
PackResult run_case(const PackCase& c) {
  Options o;
  o.dim = c.dim;
  o.blocks = c.dim == 3 ? 2 : 3;
  o.cells_per_block = c.dim == 3 ? 7 : 11;  // odd sizes: no kernel may assume even extents
  o.threads = 1;
  o.quiet = true;
  o.write_output = false;
  o.problem = Problem::sedov;
  EulerParams params;
  GridSpec spec;
  // The Sedov state with its guard cells filled (one korch::Runtime at a time: the simulation's
  // goes before the test's).
  const Grid initial = [&] {
    Simulation sim(o);
    params = sim.euler_params(0.25 * sim.stable_dt());
    spec = sim.grid().spec();
    spec.resident = c.resident;
    return sim.grid().clone();
  }();
  Grid host = initial.clone();
  for (int b = 0; b < host.n_blocks(); ++b) hydro_update_block(host, b, params);
  Grid g(spec);
  Kokkos::deep_copy(g.data(), initial.data());
  std::vector<double> box_dt(static_cast<std::size_t>(g.n_blocks()), std::numeric_limits<double>::infinity());
  PackResult result;
  {
    Runtime rt;
    StepParameters P;
    P.euler = params;
    P.box_dt = box_dt.data();
    P.device_kernel = c.kernel;
    Bundle bundle("pack", ActionParameters(P));
    std::mutex ran_mutex;
    bundle.add(TypedAction("A")
                   .on_packet([&](const ActionContext& ctx, const PacketPack& pack) {
                     const DeviceKernel k = update_pack(ctx.device_space(), ctx.parameters_as<StepParameters>(), pack);
                     const std::lock_guard<std::mutex> lock(ran_mutex);
                     result.ran.push_back(k);
                   })
                   .routine());
    rt.execute(bundle, gpu_only_with_scratch(c.scratch), g);
  }
  int& different = result.different;
  double dt_host = std::numeric_limits<double>::infinity();
  for (int b = 0; b < host.n_blocks(); ++b) {
    const Box& in = host.block(b).interior;
    const auto want = host.block_data(b);
    const auto got = g.block_data(b);
    for (int i = in.lo[0]; i < in.hi[0]; ++i)
      for (int j = in.lo[1]; j < in.hi[1]; ++j)
        for (int k = in.lo[2]; k < in.hi[2]; ++k) {
          double U[5];
          for (int v = 0; v < n_cons; ++v) {
            const int var = params.next_state + v;
            different += std::memcmp(&want(var, i, j, k), &got(var, i, j, k), sizeof(double)) != 0;
            U[v] = want(var, i, j, k);
          }
          const double t = cell_dt(U, params);
          dt_host = t < dt_host ? t : dt_host;
        }
  }
  double dt = std::numeric_limits<double>::infinity();
  for (const double t : box_dt) dt = t < dt ? t : dt;
  CHECK(dt == dt_host);
  return result;
}

}  // namespace

TEST_CASE("hydro pack: every device kernel gives the host sweep's bits and the packet's dt") {
  for (const int dim : {2, 3})
    for (const DeviceKernel kernel : {DeviceKernel::faces, DeviceKernel::fused, DeviceKernel::staged})
      for (const bool resident : {false, true}) {
        CAPTURE(dim);
        CAPTURE(static_cast<int>(kernel));
        CAPTURE(resident);
        const PackResult r = run_case({dim, kernel, resident, kernel_scratch(kernel, dim)});
        CHECK(r.different == 0);
        REQUIRE(!r.ran.empty());
        for (const DeviceKernel k : r.ran) CHECK(k == kernel);
      }
}

TEST_CASE("hydro pack: a packet without room for the kernels asked for runs those it has room for, same bits") {
  struct Room {
    DeviceKernel wanted;
    int scratch;
    DeviceKernel runs;
  };
  for (const int dim : {2, 3}) {
    const int faces = kernel_scratch(DeviceKernel::faces, dim), staged = kernel_scratch(DeviceKernel::staged, dim);
    CHECK(kernel_scratch(DeviceKernel::fused, dim) == 0);
    CHECK(staged > faces);
    for (const Room room :
         {Room{DeviceKernel::faces, 0, DeviceKernel::fused}, Room{DeviceKernel::faces, faces - 1, DeviceKernel::fused},
          Room{DeviceKernel::staged, staged - 1, DeviceKernel::faces},
          Room{DeviceKernel::staged, faces - 1, DeviceKernel::fused},
          Room{DeviceKernel::fused, staged, DeviceKernel::fused}}) {
      CAPTURE(dim);
      CAPTURE(static_cast<int>(room.wanted));
      CAPTURE(room.scratch);
      const PackResult r = run_case({dim, room.wanted, true, room.scratch});
      CHECK(r.different == 0);
      REQUIRE(!r.ran.empty());
      for (const DeviceKernel k : r.ran) CHECK(k == room.runs);
    }
  }
}
