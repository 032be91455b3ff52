// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API (korch/korch_c.h) from C++: C-ordered blocks through a bundle equal a plain loop, every
// failure is a status with a message naming the problem, and no exception crosses the boundary. The
// routine runs on packets too (gpu_only); gpu_internal, which hands out metadata only, is refused.
#include <korch/backend/spaces.hpp>
#include <korch/korch_c.h>

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>

#include <atomic>
#include <string>
#include <vector>

namespace {

// v0 = v0 * 3 - 1 on the item's cells; the item's lo/hi count the interior from 1.
int scale(const korch_item* item, double* u, void* user) {
  ++*static_cast<std::atomic<int>*>(user);  // team threads call at once
  for (int i = item->lo[0]; i <= item->hi[0]; ++i)
    for (int j = item->lo[1]; j <= item->hi[1]; ++j)
      for (int k = item->lo[2]; k <= item->hi[2]; ++k) {
        double& x = u[(i + item->guard[0] - 1) * item->stride[1] + (j + item->guard[1] - 1) * item->stride[2] +
                      (k + item->guard[2] - 1) * item->stride[3]];
        x = x * 3 - 1;
      }
  return 0;
}

std::string last() { return korch_last_error(); }

}  // namespace

TEST_CASE("C API: a bundle over C-ordered blocks equals the plain loop; failures are statuses with messages") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  CHECK(korch_initialize(nullptr) == KORCH_ERROR);
  CHECK(last().find("already initialized") != std::string::npos);

  korch_blocks* mesh = nullptr;
  REQUIRE(korch_blocks_create("c mesh", 2, &mesh) == KORCH_OK);
  // u[var][i][j][k] with cells {4, 3, 2} and guard {1, 1, 0}: extent {2, 6, 5, 2}.
  std::vector<double> u(2 * 6 * 5 * 2);
  for (std::size_t n = 0; n < u.size(); ++n) u[n] = 0.5 * static_cast<double>(n);
  const std::vector<double> initial = u;
  std::vector<double> expected = u;
  for (int i = 1; i <= 4; ++i)
    for (int j = 1; j <= 3; ++j)
      for (int k = 0; k < 2; ++k) {
        double& x = expected[static_cast<std::size_t>(((0 * 6 + i) * 5 + j) * 2 + k)];
        x = x * 3 - 1;
      }
  korch_block_shape shape{{4, 3, 2}, {1, 1, 0}, {2, 0, 0}, 0, 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
  const int64_t extent[4] = {2, 6, 5, 2};
  int32_t id = -1;
  REQUIRE(korch_blocks_add(mesh, &shape, u.data(), extent, KORCH_C_ORDER, &id) == KORCH_OK);
  CHECK(id == 0);

  korch_bundle* bundle = nullptr;
  REQUIRE(korch_bundle_create("c bundle", &bundle) == KORCH_OK);
  std::atomic<int> calls{0};
  REQUIRE(korch_bundle_add(bundle, "A", scale, &calls) == KORCH_OK);
  korch_configuration* cpu = nullptr;
  REQUIRE(korch_configuration_builtin("cpu_only", &cpu) == KORCH_OK);
  REQUIRE(korch_execute(bundle, cpu, mesh, KORCH_ALL_BLOCKS, 0) == KORCH_OK);
  CHECK(u == expected);
  CHECK(calls == 2);  // two tiles of 2 cells in x

  // A configuration that hands the routine packets: each entry in the block's own layout, the same
  // result; where packets live in device memory, refused naming the configuration.
  korch_configuration* gpu = nullptr;
  REQUIRE(korch_configuration_builtin("gpu_only", &gpu) == KORCH_OK);
  u = initial;
  if (Kokkos::SpaceAccessibility<Kokkos::HostSpace, korch::DeviceMemSpace>::accessible) {
    CHECK(korch_execute(bundle, gpu, mesh, KORCH_ALL_BLOCKS, 0) == KORCH_OK);
    CHECK(u == expected);
  } else {
    CHECK(korch_execute(bundle, gpu, mesh, KORCH_ALL_BLOCKS, 0) == KORCH_ERROR);
    CHECK(last().find("configuration 'gpu_only' gives action 'A'") != std::string::npos);
  }
  // One that hands it metadata only: refused before the cycle, naming it and what to use instead.
  korch_configuration* metadata = nullptr;
  REQUIRE(korch_configuration_builtin("gpu_internal", &metadata) == KORCH_OK);
  CHECK(korch_execute(bundle, metadata, mesh, KORCH_ALL_BLOCKS, 0) == KORCH_ERROR);
  CHECK(last().find("configuration 'gpu_internal' hands action 'A'") != std::string::npos);
  CHECK(last().find("use cpu_only") != std::string::npos);
  CHECK(korch_configuration_destroy(metadata) == KORCH_OK);

  CHECK(korch_execute(bundle, cpu, mesh, 7, 0) == KORCH_ERROR);
  CHECK(last().find("iterator is 7") != std::string::npos);
  CHECK(korch_execute(nullptr, cpu, mesh, KORCH_ALL_BLOCKS, 0) == KORCH_ERROR);
  CHECK(last().find("korch_execute: bundle is NULL") != std::string::npos);
  CHECK(korch_blocks_add(mesh, &shape, u.data(), extent, 5, &id) == KORCH_ERROR);
  CHECK(last().find("order is 5") != std::string::npos);
  shape.cells[1] = 0;
  CHECK(korch_blocks_add(mesh, &shape, u.data(), extent, KORCH_C_ORDER, &id) == KORCH_ERROR);
  CHECK(last().find("block 1 has 0 cells in y") != std::string::npos);
  CHECK(korch_bundle_add(bundle, "B", nullptr, nullptr) == KORCH_ERROR);
  CHECK(last().find("routine of action 'B' is NULL") != std::string::npos);
  char small[8];
  CHECK(korch_copy_last_error(small, sizeof small) == last().size());
  CHECK(std::string(small) == last().substr(0, 7));

  CHECK(korch_configuration_destroy(gpu) == KORCH_OK);
  CHECK(korch_configuration_destroy(cpu) == KORCH_OK);
  CHECK(korch_bundle_destroy(bundle) == KORCH_OK);
  CHECK(korch_blocks_destroy(mesh) == KORCH_OK);
  CHECK(korch_finalize() == KORCH_OK);
  CHECK(korch_finalize() == KORCH_ERROR);
  CHECK(last().find("not initialized") != std::string::npos);
}
