// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API's fill of a code's own adaptive mesh (korch_forest_*, korch_execute_forest): Fortran-
// ordered leaves named by level and position get their guard cells across levels (restriction
// from the finer leaves, copies between leaves of a level) before the cycle's routine sees them;
// a list that is no tree, and a list changed without korch_forest_relist, are statuses whose
// messages say what to fix; leaves in device memory (korch_blocks_add_device) get the same fill.
#include <korch/backend/spaces.hpp>
#include <korch/korch_c.h>

#include <Kokkos_Core.hpp>
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <string>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_c_api_forest {

namespace {

// 2 x 1 root blocks; the left one split once: four leaves of level 1, then the right root. Each
// leaf u(1-g:n+g, 1-g:n+g, 2) in Fortran order, 8 x 8 cells, 2 guard cells.
constexpr int n = 8, g = 2, stored = n + 2 * g, vars = 2;
const std::array<std::array<int, 3>, 5> where{{{0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 1}, {1, 0, 0}}};  // x, y, level

double linear(double x, double y) { return 3.0 * x - 2.0 * y + 1.0; }

struct Code {
  std::vector<std::vector<double>> u{where.size(), std::vector<double>(stored* stored* vars, -1e30)};
  // Cell (i, j) of leaf b, numbered 1..n inside.
  double& at(int b, int var, int i, int j) {
    return u[static_cast<std::size_t>(b)]
            [static_cast<std::size_t>((i + g - 1) + stored * ((j + g - 1) + stored * var))];
  }
  Code() {
    for (int b = 0; b < static_cast<int>(where.size()); ++b) {
      const double h = 1.0 / (n << where[static_cast<std::size_t>(b)][2]);
      for (int j = 1; j <= n; ++j)
        for (int i = 1; i <= n; ++i)
          at(b, 0, i, j) = linear((where[static_cast<std::size_t>(b)][0] * n + i - 0.5) * h,
                                  (where[static_cast<std::size_t>(b)][1] * n + j - 0.5) * h);
    }
  }
  // The leaves' arrays in device memory, when listed there (upload, download).
  std::vector<Kokkos::View<double*, korch::DeviceMemSpace>> device;
  void list(korch_blocks* blocks, bool with_positions, bool in_device_memory = false) {
    for (std::size_t b = 0; b < where.size(); ++b) {
      korch_block_shape shape{{n, n, 1}, {g, g, 0}, {0, 0, 0}, where[b][2], 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
      if (with_positions) shape.position[0] = where[b][0], shape.position[1] = where[b][1];
      const int64_t extent[4] = {stored, stored, 1, vars};
      if (in_device_memory) {
        device.emplace_back("leaf", u[b].size());
        REQUIRE(korch_blocks_add_device(blocks, &shape, -1, device.back().data(), extent, KORCH_FORTRAN_ORDER,
                                        nullptr) == KORCH_OK);
      } else {
        REQUIRE(korch_blocks_add(blocks, &shape, u[b].data(), extent, KORCH_FORTRAN_ORDER, nullptr) == KORCH_OK);
      }
    }
    upload();
  }
  void upload() {
    for (std::size_t b = 0; b < device.size(); ++b)
      Kokkos::deep_copy(device[b], Kokkos::View<double*, Kokkos::HostSpace>(u[b].data(), u[b].size()));
  }
  void download() {
    for (std::size_t b = 0; b < device.size(); ++b)
      Kokkos::deep_copy(Kokkos::View<double*, Kokkos::HostSpace>(u[b].data(), u[b].size()), device[b]);
  }
};

// Variable 1 = the cell's left neighbour in variable 0, guard cells included.
int left(const korch_item* item, double* u, void*) {
  for (int j = item->lo[1]; j <= item->hi[1]; ++j)
    for (int i = item->lo[0]; i <= item->hi[0]; ++i)
      u[item->stride[0] + (i + item->guard[0] - 1) * item->stride[1] + (j + item->guard[1] - 1) * item->stride[2]] =
          u[(i + item->guard[0] - 2) * item->stride[1] + (j + item->guard[1] - 1) * item->stride[2]];
  return 0;
}

std::string last() { return korch_last_error(); }

}  // namespace

TEST_CASE("C API: a code's own adaptive leaves get guard cells across levels, in a cycle and between") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  Code code;
  korch_blocks* blocks = nullptr;
  REQUIRE(korch_blocks_create("leaves", vars, &blocks) == KORCH_OK);
  code.list(blocks, false);
  const int32_t roots[3] = {2, 1, 1}, periodic[3] = {0, 0, 0};
  korch_forest* forest = nullptr;
  // Without positions every level-1 leaf claims the same place.
  CHECK(korch_forest_create(blocks, 2, roots, periodic, 1, &forest) == KORCH_ERROR);
  CHECK(forest == nullptr);
  CHECK(last().find("level 1 (0, 0, 0) is listed twice") != std::string::npos);
  REQUIRE(korch_blocks_clear(blocks) == KORCH_OK);
  code.list(blocks, true);
  const int32_t bad[3] = {2, 1, 1};
  CHECK(korch_forest_create(blocks, 2, roots, bad, 1, &forest) == KORCH_ERROR);
  CHECK(last().find("periodic[0] is 2") != std::string::npos);
  REQUIRE(korch_forest_create(blocks, 2, roots, periodic, 1, &forest) == KORCH_OK);

  korch_bundle* bundle = nullptr;
  REQUIRE(korch_bundle_create("left", &bundle) == KORCH_OK);
  REQUIRE(korch_bundle_add(bundle, "A", left, nullptr) == KORCH_OK);
  korch_configuration* cpu = nullptr;
  REQUIRE(korch_configuration_builtin("cpu_only", &cpu) == KORCH_OK);
  const int status = korch_execute_forest(bundle, cpu, forest, 0, 1);
  INFO(last());
  REQUIRE(status == KORCH_OK);
  // The coarse leaf's left guard cells are the means of the fine cells they cover: on linear data,
  // the value at their centres; its cell 1 saw the first of them in the cycle.
  for (int j = 1; j <= n; ++j)
    for (int i = 1 - g; i <= 0; ++i) {
      CHECK(code.at(4, 0, i, j) == doctest::Approx(linear(1.0 + (i - 0.5) / n, (j - 0.5) / n)).epsilon(1e-14));
      CHECK(code.at(4, 1, 1, j) == code.at(4, 0, 0, j));
    }
  // Leaves of one level copy each other's cells.
  for (int j = 1; j <= n; ++j) CHECK(code.at(0, 0, n + 1, j) == code.at(1, 0, 1, j));

  // Between cycles, the same fill; a list changed without relist is refused.
  for (int j = 1; j <= n; ++j) code.at(4, 0, 0, j) = -1.0;
  REQUIRE(korch_forest_fill(forest) == KORCH_OK);
  CHECK(code.at(4, 0, 0, 4) == doctest::Approx(linear(1.0 - 0.5 / n, 3.5 / n)).epsilon(1e-14));
  REQUIRE(korch_blocks_clear(blocks) == KORCH_OK);
  CHECK(korch_forest_fill(forest) == KORCH_ERROR);
  CHECK(last().find("call relist()") != std::string::npos);
  code.list(blocks, true);
  CHECK(korch_forest_relist(forest) == KORCH_OK);
  CHECK(korch_execute_forest(bundle, cpu, forest, 0, -1) == KORCH_OK);
  CHECK(korch_execute_forest(bundle, cpu, forest, 1, 5) == KORCH_ERROR);
  CHECK(last().find("variables [1, 6)") != std::string::npos);
  CHECK(korch_forest_relist(reinterpret_cast<korch_forest*>(blocks)) == KORCH_ERROR);

  CHECK(korch_forest_destroy(forest) == KORCH_OK);
  CHECK(korch_configuration_destroy(cpu) == KORCH_OK);
  CHECK(korch_bundle_destroy(bundle) == KORCH_OK);
  CHECK(korch_blocks_destroy(blocks) == KORCH_OK);
  CHECK(korch_finalize() == KORCH_OK);
}

TEST_CASE("C API: a code's adaptive leaves in device memory get the same guard cells across levels") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  Code code;
  korch_blocks* blocks = nullptr;
  REQUIRE(korch_blocks_create("device leaves", vars, &blocks) == KORCH_OK);
  code.list(blocks, true, true);
  const int32_t roots[3] = {2, 1, 1}, periodic[3] = {0, 0, 0};
  korch_forest* forest = nullptr;
  REQUIRE(korch_forest_create(blocks, 2, roots, periodic, 1, &forest) == KORCH_OK);
  korch_bundle* bundle = nullptr;
  REQUIRE(korch_bundle_create("left", &bundle) == KORCH_OK);
  REQUIRE(korch_bundle_add(bundle, "A", left, nullptr) == KORCH_OK);
  korch_configuration* cpu = nullptr;
  REQUIRE(korch_configuration_builtin("cpu_only", &cpu) == KORCH_OK);
  const int status = korch_execute_forest(bundle, cpu, forest, 0, 1);
  INFO(last());
  REQUIRE(status == KORCH_OK);
  code.download();  // the cycle wrote its host copies back to the device arrays
  for (int j = 1; j <= n; ++j) {
    CHECK(code.at(4, 0, 0, j) == doctest::Approx(linear(1.0 - 0.5 / n, (j - 0.5) / n)).epsilon(1e-14));
    CHECK(code.at(4, 1, 1, j) == code.at(4, 0, 0, j));
    CHECK(code.at(0, 0, n + 1, j) == code.at(1, 0, 1, j));
  }
  // Between cycles: the fill reads what the code's own kernels left in the arrays.
  for (int j = 1; j <= n; ++j) code.at(4, 0, 0, j) = -1.0;
  code.at(1, 0, 1, 3) += 1.0;
  code.upload();
  REQUIRE(korch_forest_fill(forest) == KORCH_OK);
  code.download();
  CHECK(code.at(4, 0, 0, 4) == doctest::Approx(linear(1.0 - 0.5 / n, 3.5 / n)).epsilon(1e-14));
  CHECK(code.at(0, 0, n + 1, 3) == code.at(1, 0, 1, 3));
  CHECK(korch_forest_destroy(forest) == KORCH_OK);
  CHECK(korch_configuration_destroy(cpu) == KORCH_OK);
  CHECK(korch_bundle_destroy(bundle) == KORCH_OK);
  CHECK(korch_blocks_destroy(blocks) == KORCH_OK);
  CHECK(korch_finalize() == KORCH_OK);
}

}  // namespace test_c_api_forest
