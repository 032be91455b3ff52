// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host memory of resident data (docs/residency.md "Host memory"): a block's host copy is kept only
// while something on the host uses it. A device run hands the pages of a resident grid's host copy,
// and of a device list's host copies, back to the system; outputs and host cycles bring blocks back
// with the device's cells; a data-parallel run keeps the host copies of the blocks the host computes.
// Blocks here span many pages, so that released pages really read as zeros until brought back.
#include "test_runtime_support.hpp"

#include <korch/backend/host_pages.hpp>
#include <korch/block_list.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/grid_residency.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_residency_host_memory {

using namespace korch;
using namespace korch::test;

namespace {

// 2-D blocks of odd sizes, each about 20 pages of three variables.
GridSpec large_blocks(bool resident) {
  GridSpec s;
  s.block_cells = {61, 47, 1};
  s.blocks = {3, 2, 1};
  s.guard = 2;
  s.guard_dims = 2;
  s.n_vars = 3;
  s.tile_cells = {16, 16, 0};
  s.resident = resident;
  return s;
}

constexpr std::size_t block_bytes = 65 * 51 * 3 * sizeof(double);

Bundle affine_bundle(const std::vector<Affine>& actions) {
  Bundle b("host memory");
  for (const auto& f : actions) b.add(affine_routine(f, nullptr));
  return b;
}

const Affine update{"A", 0, 1, 0.5, 0.75, 0.125};  // u0 = 0.5 u1 + 0.75 u0 + 0.125

// Both grids' cells, read only (a resident grid's device copies stay valid).
bool same_cells(const Grid& a, const Grid& b) {
  auto x = a.read_data();
  auto y = b.read_data();
  for (std::size_t n = 0; n < x.size(); ++n)
    if (x.data()[n] != y.data()[n]) return false;
  return true;
}

// The same cells in a resident grid and in a plain one.
struct TwoGrids {
  Grid resident{large_blocks(true)};
  Grid plain{large_blocks(false)};
  TwoGrids() {
    fill_pattern(resident);
    fill_pattern(plain);
  }
};

// Two pages of every block at most are not counted as resident (the pages it shares with others).
bool mostly_resident(const DeviceResidency& r, std::size_t bytes) {
  return r.host_bytes_resident() + 2 * static_cast<std::size_t>(r.n_blocks()) * host_page_bytes() >= bytes;
}

}  // namespace

TEST_CASE("Host memory: a device run drops a resident grid's host copy; outputs bring it back for a cycle") {
  Runtime rt;
  TwoGrids grids;
  Grid &resident = grids.resident, &plain = grids.plain;
  GridResidency& r = *resident.residency();
  const std::size_t all = block_bytes * 6;
  REQUIRE(r.host_bytes_kept() == all);
  const Configuration gpu = configurations::get("gpu_only");
  const Bundle bundle = affine_bundle({update});
  const auto both = [&] {
    rt.execute(bundle, gpu, resident);
    rt.execute(bundle, gpu, plain);
  };
  both();  // the host filled the grid before this cycle: its copy stays for now
  CHECK(r.host_bytes_kept() == all);
  both();  // no one on the host used it during the last cycle
  CHECK(r.host_bytes_kept() == 0);
  CHECK(r.host_bytes_resident() == 0);
  for (int b = 0; b < resident.n_blocks(); ++b) CHECK_FALSE(r.host_valid(b, 2));
  both();
  CHECK(resident.residency_transfers().device_to_host == 0);  // dropping copies moves nothing

  // An output between cycles: every block comes back with the device's cells, and stays for the
  // next cycle, which moves nothing (the device copies stayed valid).
  CHECK(same_cells(resident, plain));
  CHECK(resident.residency_transfers().device_to_host == all);
  CHECK(r.host_bytes_kept() == all);
  CHECK(mostly_resident(r, all));
  rt.execute(bundle, gpu, resident);
  CHECK(rt.last_transfers().host_to_device < 6 * 256);  // packet metadata only
  rt.execute(bundle, gpu, plain);
  CHECK(r.host_bytes_kept() == all);
  both();
  CHECK(r.host_bytes_kept() == 0);

  // One block used on the host between cycles: only it is kept, and it comes back right.
  (void)resident.block_view(4);
  (void)plain.block_view(4);
  both();
  CHECK(r.host_bytes_kept() == block_bytes);
  CHECK(r.host_valid(4, 0) == false);  // the cycle wrote it on the device
  CHECK(same_cells(resident, plain));
}

TEST_CASE("Host memory: a code may drop unused host copies itself; host-only data is never dropped") {
  Runtime rt;
  TwoGrids grids;
  Grid &resident = grids.resident, &plain = grids.plain;
  GridResidency& r = *resident.residency();
  // Valid on the host alone (never staged): dropping it would lose data, so it stays.
  CHECK(r.release_unused_host_copies() == 0);
  CHECK(r.release_unused_host_copies() == 0);
  CHECK(r.host_bytes_kept() == block_bytes * 6);
  rt.execute(affine_bundle({update}), configurations::get("gpu_only"), resident);
  rt.execute(affine_bundle({update}), configurations::get("gpu_only"), plain);
  CHECK(same_cells(resident, plain));  // now valid on both sides, used by the host
  CHECK(r.release_unused_host_copies() == 0);
  CHECK(r.release_unused_host_copies() > block_bytes * 5);  // unused since the last call: dropped
  CHECK(r.host_bytes_kept() == 0);
  for (int b = 0; b < resident.n_blocks(); ++b) {
    CHECK_FALSE(r.host_valid(b, 1));  // dropped copies are stale, though their cells were current
    CHECK(r.device_valid(b, 1));
  }
  CHECK(same_cells(resident, plain));  // brought back from the device
}

TEST_CASE("Host memory: a grid told to keep its host copy keeps it through device cycles") {
  Runtime rt;
  TwoGrids grids;
  GridResidency& r = *grids.resident.residency();
  r.keep_host_copies(true);
  for (int cycle = 0; cycle < 3; ++cycle) {
    rt.execute(affine_bundle({update}), configurations::get("gpu_only"), grids.resident);
    rt.execute(affine_bundle({update}), configurations::get("gpu_only"), grids.plain);
  }
  CHECK(r.host_bytes_kept() == block_bytes * 6);
  CHECK(mostly_resident(r, block_bytes * 6));
  CHECK(same_cells(grids.resident, grids.plain));
}

TEST_CASE("Host memory: a data-parallel run keeps the host copies of the blocks the host computes") {
  Runtime rt;
  TwoGrids grids;
  Grid &resident = grids.resident, &plain = grids.plain;
  GridResidency& r = *resident.residency();
  const Configuration split = configurations::get("cpu_gpu_data_parallel");
  const Bundle bundle = affine_bundle({update});
  for (int cycle = 0; cycle < 5; ++cycle) {
    rt.execute(bundle, split, resident);
    rt.execute(bundle, split, plain);
  }
  std::size_t host_blocks = 0;
  for (int b = 0; b < resident.n_blocks(); ++b) host_blocks += r.host_valid(b, 0) ? 1 : 0;
  CHECK(host_blocks > 0);
  CHECK(host_blocks < 6);
  CHECK(r.host_bytes_kept() == host_blocks * block_bytes);  // the device's share is dropped
  CHECK(mostly_resident(r, host_blocks * block_bytes));
  CHECK(resident.max_interior_difference(plain) <= 1e-12);
}

namespace {
// The same code twice, Fortran-ordered u(i, j, k, var) blocks with padded rows of about 25 pages:
// one list of host arrays, one of device arrays.
struct FortranCode {
  static constexpr int n_vars = 3;
  static constexpr std::int64_t nx = 45, ny = 33, nz = 7, row = nx + 3;
  static constexpr std::int64_t size = row * ny * nz * n_vars;
  std::vector<std::vector<double>> host;
  std::vector<Kokkos::View<double*, DeviceMemSpace>> device;
  BlockList host_list{"host code", n_vars};
  BlockList device_list{"device code", n_vars};

  explicit FortranCode(int n_blocks) {
    for (int b = 0; b < n_blocks; ++b) {
      host.emplace_back(static_cast<std::size_t>(size), -7.0);
      for (std::int64_t n = 0; n < size; ++n) host.back()[static_cast<std::size_t>(n)] = 0.001 * n + b;
      device.emplace_back("code block", static_cast<std::size_t>(size));
      Kokkos::deep_copy(device.back(),
                        Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                            host.back().data(), host.back().size()));
      BlockShape shape;
      shape.cells = {static_cast<int>(nx) - 4, static_cast<int>(ny) - 4, static_cast<int>(nz) - 4};
      shape.guard = {2, 2, 2};
      const std::array<std::int64_t, 4> extent{n_vars, nx, ny, nz}, stride{row * ny * nz, 1, row, row * ny};
      host_list.add(shape, BlockArray::of(host.back().data(), IndexOrder::var_i_j_k, extent, stride));
      device_list.add(shape, BlockArray::on_device(device.back().data(), IndexOrder::var_i_j_k, extent, stride));
    }
  }
  bool same_storage() const {
    for (std::size_t b = 0; b < host.size(); ++b) {
      std::vector<double> out(static_cast<std::size_t>(size));
      Kokkos::deep_copy(
          Kokkos::View<double*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(out.data(), out.size()),
          device[b]);
      if (out != host[b]) return false;
    }
    return true;
  }
};
}  // namespace

TEST_CASE("Host memory: a device list's host copies last while host cycles use them, whatever the sequence") {
  Runtime rt;
  FortranCode code(5);
  DeviceResidency& r = *code.device_list.device_residency();
  CHECK(r.host_bytes_kept() == 0);  // none made yet
  const char* names[] = {"cpu_only", "gpu_only", "cpu_gpu_data_parallel", "cpu_gpu_action_parallel"};
  const Bundle one = affine_bundle({update});
  const Bundle two = affine_bundle({{"A", 0, 0, 0.5, 0.25, 1.0}, {"B", 1, 1, 2.0, -0.5, 0.25}});
  std::mt19937 random(4099);
  std::string previous;
  for (int cycle = 0; cycle < 30; ++cycle) {
    const std::string name = names[random() % 4];
    CAPTURE(cycle);
    CAPTURE(name);
    const Configuration c = configurations::get(name);
    const Bundle& bundle = name == "cpu_gpu_action_parallel" ? two : one;
    rt.execute(bundle, c, code.device_list);
    rt.execute(bundle, c, code.host_list);
    REQUIRE(code.same_storage());
    if (name == "gpu_only" && previous == "gpu_only") CHECK(r.host_bytes_kept() == 0);
    if (name == "cpu_only") CHECK(r.host_bytes_kept() > 0);  // the next host cycle reuses them
    previous = name;
  }
  rt.execute(one, configurations::get("gpu_only"), code.device_list);
  rt.execute(one, configurations::get("gpu_only"), code.device_list);
  CHECK(r.host_bytes_kept() == 0);
  CHECK(r.host_bytes_resident() == 0);
}

}  // namespace test_residency_host_memory
