// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The hydro update of a whole packet in one launch (hydro_pack.hpp), which device packets run on
// CUDA and HIP builds, run here on the host: the same bits as the host sweep per block, on a
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
#include <vector>

using namespace korch;
using namespace korch::hydro;

TEST_CASE("hydro pack: one launch per packet gives the host sweep's bits and the packet's dt") {
  Options o;
  o.blocks = 3;
  o.cells_per_block = 10;
  o.threads = 1;
  o.quiet = true;
  o.write_output = false;
  o.problem = Problem::sedov;
  for (const bool resident : {false, true}) {
    CAPTURE(resident);
    std::vector<double> reference, packed;
    EulerParams params;
    double dt_host = std::numeric_limits<double>::infinity();
    std::vector<double> box_dt;
    GridSpec spec;
    {
      // The Sedov state with its guard cells filled (one korch::Runtime at a time: the
      // simulation's goes before the test's).
      const Grid initial = [&] {
        Simulation sim(o);
        params = sim.euler_params(0.25 * sim.stable_dt());
        spec = sim.grid().spec();
        spec.resident = resident;
        return sim.grid().clone();
      }();
      Grid host = initial.clone();
      for (int b = 0; b < host.n_blocks(); ++b) hydro_update_block(host, b, params);
      auto d = host.data();
      reference.assign(d.data(), d.data() + d.size());
      Grid g(spec);
      Kokkos::deep_copy(g.data(), initial.data());
      Runtime rt;
      StepParameters P;
      P.euler = params;
      box_dt.assign(static_cast<std::size_t>(g.n_blocks()), std::numeric_limits<double>::infinity());
      P.box_dt = box_dt.data();
      Bundle bundle("pack", ActionParameters(P));
      bundle.add(TypedAction("A")
                     .on_packet([](const ActionContext& ctx, const PacketPack& pack) {
                       update_pack(ctx.device_space(), ctx.parameters_as<StepParameters>(), pack);
                     })
                     .routine());
      rt.execute(bundle, configurations::get("gpu_only"), g);
      auto out = g.data();
      packed.assign(out.data(), out.data() + out.size());
      for (int b = 0; b < host.n_blocks(); ++b) {
        auto v = host.block_data(b);
        for (int i = 2; i < 12; ++i)
          for (int j = 2; j < 12; ++j) {
            double U[5];
            for (int c = 0; c < n_cons; ++c) U[c] = v(params.next_state + c, i, j, 0);
            const double t = cell_dt(U, params);
            dt_host = t < dt_host ? t : dt_host;
          }
      }
    }
    // The updated state's interior cells (the guard cells of the next state are not written).
    REQUIRE(reference.size() == packed.size());
    const Grid shape(spec);
    int different = 0;
    for (int b = 0; b < shape.n_blocks(); ++b)
      for (int v = params.next_state; v < params.next_state + n_cons; ++v)
        for (int i = 2; i < 12; ++i)
          for (int j = 2; j < 12; ++j) {
            const std::size_t at = ((static_cast<std::size_t>(b) * spec.n_vars + v) * 14 + i) * 14 + j;
            different += std::memcmp(&reference[at], &packed[at], sizeof(double)) != 0;
          }
    CHECK(different == 0);
    double dt = std::numeric_limits<double>::infinity();
    for (const double t : box_dt) dt = t < dt ? t : dt;
    CHECK(dt == dt_host);
  }
}
