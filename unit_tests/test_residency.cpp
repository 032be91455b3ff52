// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Resident grids (docs/residency.md): device configurations move a block's variables only where
// the side that runs the action holds a stale copy, give the same cells as a non-resident grid
// whatever mix of host and device cycles runs, and host accessors see the device's results.
#include "test_runtime_support.hpp"

#include <korch/communicator.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/decomposition.hpp>
#include <korch/guard_cell_exchange.hpp>
#include <korch/grid_residency.hpp>
#include <korch/packet_pack.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>

#include <array>
#include <string>
#include <vector>

using namespace korch;
using namespace korch::test;

namespace {

// 2-D blocks of odd sizes with two guard cells, tiles that do not divide them, three variables.
GridSpec residency_spec(bool resident) {
  GridSpec s;
  s.block_cells = {7, 5, 1};
  s.blocks = {3, 2, 1};
  s.guard = 2;
  s.guard_dims = 2;
  s.n_vars = 3;
  s.tile_cells = {4, 3, 0};
  s.resident = resident;
  return s;
}

constexpr std::uint64_t var_bytes = (7 + 4) * (5 + 4) * 1 * sizeof(double);  // one variable of one block
constexpr std::uint64_t n_blocks = 6;
constexpr std::uint64_t metadata_bound = n_blocks * 256;  // each packet's entry metadata

Bundle affine_bundle(const std::vector<Affine>& actions) {
  Bundle b("residency");
  for (const auto& f : actions) b.add(affine_routine(f, nullptr));
  return b;
}

// Every stored double of both grids (guard cells included) is the same bit pattern.
bool same_cells(const Grid& a, const Grid& b) {
  auto x = a.data();
  auto y = b.data();
  for (std::size_t n = 0; n < x.size(); ++n)
    if (x.data()[n] != y.data()[n]) return false;
  return true;
}

const Affine device_update{"A", 0, 1, 0.5, 0.75, 0.125};  // u0 = 0.5 u1 + 0.75 u0 + 0.125

template <class Space>
void double_on_pack(const Space& space, const PacketPack& p) {
  Kokkos::parallel_for(
      p.policy(space), KOKKOS_LAMBDA(int e, int i, int j, int k) {
        if (p.updates(e, i, j, k)) p(e, 2, i, j, k) = 2.0 * p(e, 1, i, j, k) + p(e, 2, i, j, k);
      });
}

}  // namespace

TEST_CASE("Residency: gpu_only moves every block once, then only packet metadata; host accessors bring results back") {
  Runtime rt;
  Grid resident(residency_spec(true));
  Grid plain(residency_spec(false));
  fill_pattern(resident);
  fill_pattern(plain);
  REQUIRE(resident.residency() != nullptr);
  CHECK(plain.residency() == nullptr);
  const Configuration gpu = configurations::get("gpu_only");
  const Bundle bundle = affine_bundle({device_update});
  const std::uint64_t all_vars = n_blocks * 3 * var_bytes;
  for (int cycle = 0; cycle < 4; ++cycle) {
    CAPTURE(cycle);
    rt.execute(bundle, gpu, plain);
    const TransferBytes staged = rt.last_transfers();
    CHECK(staged.device_to_host >= all_vars);  // each packet section padded to 64 bytes
    rt.execute(bundle, gpu, resident);
    const TransferBytes t = rt.last_transfers();
    CHECK(t.device_to_host == 0);  // results stay on the device
    if (cycle == 0) {
      CHECK(t.host_to_device > all_vars);  // every block once, with the metadata
      CHECK(t.host_to_device < all_vars + metadata_bound);
    } else {
      CHECK(t.host_to_device < metadata_bound);  // the device copy is valid: nothing but metadata
    }
  }
  // The device holds what the action wrote, the host copy of it is stale until a host accessor asks.
  GridResidency& r = *resident.residency();
  for (int b = 0; b < resident.n_blocks(); ++b) {
    CHECK(r.device_valid(b, 0));
    CHECK_FALSE(r.host_valid(b, 0));
  }
  CHECK(resident.residency_transfers().device_to_host == 0);
  (void)resident.block_view(4);  // a host accessor: block 4 comes back, its device copy turns stale
  CHECK(r.host_valid(4, 0));
  CHECK_FALSE(r.device_valid(4, 0));
  CHECK_FALSE(r.device_valid(4, 1));
  CHECK(r.device_valid(3, 0));
  CHECK(resident.residency_transfers().device_to_host == 3 * var_bytes);
  CHECK(same_cells(resident, plain));  // data() brings back the rest
  CHECK(resident.residency_transfers().device_to_host == all_vars);
  // The next device cycle stages every block again, since data() may have written them.
  rt.execute(bundle, gpu, resident);
  rt.execute(bundle, gpu, plain);
  CHECK(rt.last_transfers().host_to_device > all_vars);
  CHECK(same_cells(resident, plain));
}

TEST_CASE("Residency: host and device cycles in turn give the non-resident grid's cells bit for bit") {
  Runtime rt;
  Grid resident(residency_spec(true));
  Grid plain(residency_spec(false));
  fill_pattern(resident);
  fill_pattern(plain);
  const Affine host_update{"A", 1, 0, -0.25, 1.0, 0.5};  // u1 = u1 - 0.25 u0 + 0.5, on tiles
  const Bundle device_bundle = affine_bundle({device_update});
  const Bundle host_bundle = affine_bundle({host_update});
  const Configuration gpu = configurations::get("gpu_only");
  const Configuration cpu = configurations::get("cpu_only");
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    for (Grid* g : {&resident, &plain}) {
      rt.execute(device_bundle, gpu, *g);
      rt.execute(device_bundle, gpu, *g);
      rt.execute(host_bundle, cpu, *g);  // its tiles take block views: blocks come back first
    }
    CHECK(same_cells(resident, plain));
  }
  // Two device cycles in a row move the grid once: the second finds the device copy valid.
  rt.execute(device_bundle, gpu, resident);
  CHECK(rt.last_transfers().host_to_device > n_blocks * 3 * var_bytes);
  rt.execute(device_bundle, gpu, resident);
  CHECK(rt.last_transfers().host_to_device < metadata_bound);
}

TEST_CASE("Residency: the data-parallel and action-parallel configurations give the non-resident grid's cells") {
  Runtime rt;
  SUBCASE("cpu_gpu_data_parallel: blocks split between the host's tiles and the device's packets") {
    Grid resident(residency_spec(true));
    Grid plain(residency_spec(false));
    fill_pattern(resident);
    fill_pattern(plain);
    const Configuration split = configurations::get("cpu_gpu_data_parallel");
    const Bundle bundle = affine_bundle({device_update});
    for (int cycle = 0; cycle < 4; ++cycle) {
      rt.execute(bundle, split, resident);
      rt.execute(bundle, split, plain);
    }
    // The same arithmetic on either side: equal up to the device's rounding on a GPU build.
    CHECK(resident.max_interior_difference(plain) <= 1e-12);
  }
  SUBCASE("cpu_gpu_action_parallel: host tiles update u0 while device packets update u1 of the same blocks") {
    Grid resident(residency_spec(true));
    Grid plain(residency_spec(false));
    fill_pattern(resident);
    fill_pattern(plain);
    const Configuration both = configurations::get("cpu_gpu_action_parallel");
    const Bundle bundle = affine_bundle({{"A", 0, 0, 0.5, 0.25, 1.0}, {"B", 1, 1, 2.0, -0.5, 0.25}});
    for (int cycle = 0; cycle < 4; ++cycle) {
      CAPTURE(cycle);
      rt.execute(bundle, both, resident);
      rt.execute(bundle, both, plain);
      CHECK(resident.max_interior_difference(plain) <= 1e-12);
    }
  }
}

TEST_CASE(
    "Residency: while a packet holds a variable on the device, host accessors leave it; afterwards they bring it") {
  Grid resident(residency_spec(true));
  fill_pattern(resident);
  GridResidency& r = *resident.residency();
  const DeviceTaskSpace instance;
  const std::vector<int> block{4};
  r.begin_device_use(block, {1}, {1, 2}, instance);  // reads 1, writes 1 (read and written) and 2 (written only)
  CHECK(r.held_on_device(4, 1));
  CHECK(r.held_on_device(4, 2));
  CHECK_FALSE(r.held_on_device(4, 0));
  CHECK_FALSE(r.host_valid(4, 1));  // the kernel may change it from here
  CHECK(r.host_valid(4, 2));        // only written: the host copy stays until the kernel is done
  const TransferBytes before = resident.residency_transfers();
  (void)resident.block_view(4);  // a host action on variable 0 beside the kernel
  CHECK(resident.residency_transfers().device_to_host == before.device_to_host);
  CHECK_FALSE(r.host_valid(4, 1));
  CHECK(r.device_valid(4, 1));  // the host's write access did not take it from the device
  CHECK_FALSE(r.device_valid(4, 0));
  r.end_device_use(block, {1}, {1, 2});
  CHECK_FALSE(r.held_on_device(4, 1));
  CHECK_FALSE(r.host_valid(4, 2));
  (void)resident.block_view(4);
  CHECK(resident.residency_transfers().device_to_host == before.device_to_host + 2 * var_bytes);
  CHECK(r.host_valid(4, 1));
  CHECK(r.host_valid(4, 2));
}

TEST_CASE("Residency: a variable the packets do not carry is never moved; one they only read is not moved back") {
  Runtime rt;
  Grid resident(residency_spec(true));
  Grid plain(residency_spec(false));
  fill_pattern(resident);
  fill_pattern(plain);
  Configuration gpu = configurations::get("gpu_only");
  for (auto& h : gpu.helpers) {
    if (h.name != "to_gpu") continue;
    h.variables.copy_in = {1};      // read only
    h.variables.copy_in_out = {0};  // read and written; variable 2 is not carried
  }
  const Bundle bundle = affine_bundle({device_update});
  rt.execute(bundle, gpu, resident);
  const TransferBytes first = rt.last_transfers();
  CHECK(first.host_to_device > n_blocks * 2 * var_bytes);
  CHECK(first.host_to_device < n_blocks * 2 * var_bytes + metadata_bound);
  GridResidency& r = *resident.residency();
  for (int b = 0; b < resident.n_blocks(); ++b) {
    CHECK(r.device_valid(b, 0));
    CHECK_FALSE(r.host_valid(b, 0));
    CHECK(r.device_valid(b, 1));  // read on the device: valid on both sides
    CHECK(r.host_valid(b, 1));
    CHECK_FALSE(r.device_valid(b, 2));  // never carried: never copied
    CHECK(r.host_valid(b, 2));
  }
  rt.execute(bundle, gpu, resident);
  CHECK(rt.last_transfers().host_to_device < metadata_bound);
  rt.execute(bundle, gpu, plain);
  rt.execute(bundle, gpu, plain);
  // Bringing block 0 back copies only the variable its host copy lacks.
  (void)resident.block_data(0);
  CHECK(resident.residency_transfers().device_to_host == var_bytes);
  CHECK(resident.max_interior_difference(plain) == 0.0);
  CHECK(resident.residency_transfers().host_to_device == n_blocks * 2 * var_bytes);
}

TEST_CASE("Residency: a PacketPack kernel addresses the resident grid's device copy") {
  Runtime rt;
  Grid resident(residency_spec(true));
  Grid plain(residency_spec(false));
  fill_pattern(resident);
  fill_pattern(plain);
  const ActionRoutine pack_action = TypedAction("A").on_packet(
      [](const ActionContext& ctx, const PacketPack& p) { double_on_pack(ctx.device_space(), p); });
  Bundle bundle("pack");
  bundle.add(pack_action);
  Configuration gpu = configurations::get("gpu_only");
  for (auto& h : gpu.helpers)
    if (h.name == "to_gpu") {
      h.variables.copy_in = {1};
      h.variables.copy_in_out = {2};
    }
  for (int cycle = 0; cycle < 3; ++cycle) {
    rt.execute(bundle, gpu, resident);
    rt.execute(bundle, gpu, plain);
  }
  CHECK(same_cells(resident, plain));
}

TEST_CASE("Residency: host accessors of every kind bring the device's results back") {
  Runtime rt;
  Grid resident(residency_spec(true));
  Grid plain(residency_spec(false));
  fill_pattern(resident);
  fill_pattern(plain);
  const Configuration gpu = configurations::get("gpu_only");
  const Bundle bundle = affine_bundle({device_update});
  rt.execute(bundle, gpu, resident);
  rt.execute(bundle, gpu, plain);
  const auto& m = resident.block(1);
  const int i = m.interior.lo[0] + 2, j = m.interior.lo[1] + 1, k = m.interior.lo[2];
  const double expected = plain.block_data(1)(0, i, j, k);
  CHECK(resident.block_data(1)(0, i, j, k) == expected);
  rt.execute(bundle, gpu, resident);
  rt.execute(bundle, gpu, plain);
  const double next = plain.block_data(1)(0, i, j, k);
  CHECK(next != expected);
  CHECK(resident.block_view(1)(0, i, j, k) == next);
  rt.execute(bundle, gpu, resident);
  rt.execute(bundle, gpu, plain);
  const auto ext = resident.stored_extent();
  const std::size_t at = (static_cast<std::size_t>(i) * ext[1] + static_cast<std::size_t>(j)) * ext[2] + k;
  CHECK(resident.block_pointer(1)[at] == plain.block_pointer(1)[at]);
  rt.execute(bundle, gpu, resident);
  rt.execute(bundle, gpu, plain);
  // A write through a host accessor reaches the next device cycle.
  resident.block_data(2)(1, i, j, k) = 5.0;
  plain.block_data(2)(1, i, j, k) = 5.0;
  rt.execute(bundle, gpu, resident);
  rt.execute(bundle, gpu, plain);
  CHECK(resident.data()(2, 0, i, j, k) == plain.data()(2, 0, i, j, k));
  // A clone is a grid of its own: valid on the host, the same cells.
  const Grid copy = resident.clone();
  CHECK(same_cells(copy, plain));
  REQUIRE(copy.residency() != nullptr);
  CHECK_FALSE(copy.residency()->device_valid(0, 0));
}

TEST_CASE("Residency: after a failed device action the host sees what the device holds, never an older copy") {
  Runtime rt;
  Grid resident(residency_spec(true));
  fill_pattern(resident);
  const Configuration gpu = configurations::get("gpu_only");
  // Writes 7 into u0 of every entry on the device, then fails.
  const ActionRoutine failing("A", [](const ActionContext& ctx, DataItem& item) {
    auto& p = dynamic_cast<DataPacket&>(item);
    for (std::size_t e = 0; e < p.size(); ++e) Kokkos::deep_copy(p.device_var(e, 0), 7.0);
    ctx.device_space().fence();
    throw Error("the action failed on purpose");
  });
  Bundle bundle("failing");
  bundle.add(failing);
  CHECK_THROWS_AS(rt.execute(bundle, gpu, resident), Error);
  for (int b = 0; b < resident.n_blocks(); ++b) {
    const bool on_device = resident.residency()->device_valid(b, 0);
    CHECK(on_device != resident.residency()->host_valid(b, 0));  // one side only, never both
    if (!on_device) continue;
    // The packet's action wrote 7, or the cycle stopped before it ran: the cells as they were.
    const double seen = resident.block_data(b)(0, 3, 3, 0);
    CHECK((seen == 7.0 || seen == 0.25 * b + 0.01 * 3 + 0.02 * 3));
  }
}
