// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API's ranks and guard cells (korch/korch_c.h) from C++: a ring of C-ordered blocks of two
// widths, each rank adding its own with global ids, filled at once, block by block and inside a
// cycle, periodic or with reflecting walls in y that a C boundary fill fills; mistakes come back as
// statuses with messages; the same ring in device memory is filled there and routines on the host
// see host copies written back. Runs as one process and under mpirun.
#include <korch/backend/spaces.hpp>
#include <korch/korch_c.h>

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace {

constexpr int n_blocks = 6, ny = 4, g = 2, n_vars = 2;
int width_of(int global) { return global % 2 == 0 ? 5 : 7; }
int origin_of(int global) {
  int x = 0;
  for (int b = 0; b < global; ++b) x += width_of(b);
  return x;
}
constexpr int nx_total = 36;
double value_at(int x, int y, int v) { return 1.0 + x + 1000.0 * y + 0.25 * v; }

using DeviceArray = Kokkos::View<double*, korch::DeviceMemSpace>;

struct Ring {
  bool walls = false;  // y's edges are reflecting walls (KORCH_NEIGHBOUR_USER), not periodic
  int rank = 0, size = 1;
  std::vector<int> globals;               // per local block
  std::vector<std::vector<double>> data;  // u[var][i][j][1]; with blocks in device memory, their host image
  std::vector<DeviceArray> device;        // the blocks' arrays when in device memory (upload, download)
  korch_blocks* blocks = nullptr;

  explicit Ring(bool reflecting_walls = false, bool in_device_memory = false) : walls(reflecting_walls) {
    REQUIRE(korch_ranks(&rank, &size) == KORCH_OK);
    REQUIRE(korch_blocks_create("c ring", n_vars, &blocks) == KORCH_OK);
    for (int global = 0; global < n_blocks; ++global) {
      if (global * size / n_blocks != rank) continue;
      const int w = width_of(global);
      data.emplace_back(static_cast<std::size_t>(n_vars * (w + 2 * g) * (ny + 2 * g)));
      korch_block_shape shape{{w, ny, 1}, {g, g, 0}, {0, 0, 0}, 0, 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
      const int64_t extent[4] = {n_vars, w + 2 * g, ny + 2 * g, 1};
      int32_t id = -1;
      if (in_device_memory) {
        device.emplace_back("c ring block", data.back().size());
        REQUIRE(korch_blocks_add_device(blocks, &shape, global, device.back().data(), extent, KORCH_C_ORDER, &id) ==
                KORCH_OK);
      } else {
        REQUIRE(korch_blocks_add_global(blocks, &shape, global, data.back().data(), extent, KORCH_C_ORDER, &id) ==
                KORCH_OK);
      }
      globals.push_back(global);
    }
  }
  ~Ring() { korch_blocks_destroy(blocks); }

  // Copies the host image to the blocks' device arrays, or back.
  void upload() {
    for (std::size_t b = 0; b < device.size(); ++b)
      Kokkos::deep_copy(device[b], Kokkos::View<const double*, Kokkos::HostSpace>(data[b].data(), data[b].size()));
  }
  void download() {
    for (std::size_t b = 0; b < device.size(); ++b)
      Kokkos::deep_copy(Kokkos::View<double*, Kokkos::HostSpace>(data[b].data(), data[b].size()), device[b]);
  }

  korch_neighbours* neighbours() const {
    korch_neighbours* n = nullptr;
    REQUIRE(korch_neighbours_create(2, &n) == KORCH_OK);
    for (int b = 0; b < static_cast<int>(globals.size()); ++b)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (dx == 0 && dy == 0) continue;
          const int other = (globals[static_cast<std::size_t>(b)] + dx + n_blocks) % n_blocks;
          const int32_t direction[3] = {dx, dy, 0};
          const int kind = walls && dy != 0 ? KORCH_NEIGHBOUR_USER : KORCH_NEIGHBOUR_BLOCK;
          REQUIRE(korch_neighbours_set(n, b, direction, kind, other, other * size / n_blocks) == KORCH_OK);
        }
    return n;
  }

  void paint() {
    for (std::size_t b = 0; b < globals.size(); ++b) {
      const int w = width_of(globals[b]), x0 = origin_of(globals[b]);
      for (int v = 0; v < n_vars; ++v)
        for (int i = 0; i < w + 2 * g; ++i)
          for (int j = 0; j < ny + 2 * g; ++j) {
            const bool interior = i >= g && i < g + w && j >= g && j < g + ny;
            data[b][static_cast<std::size_t>((v * (w + 2 * g) + i) * (ny + 2 * g) + j)] =
                interior ? value_at(x0 + i - g, j - g, v) : std::numeric_limits<double>::quiet_NaN();
          }
    }
  }

  // Guard cells of variables [0, count) of local block b that do not hold the periodic neighbour's
  // cell, or with walls minus the cell mirrored across the wall, within `reach` guard cells per side
  // (NaN beyond).
  int wrong(int b, int count, std::array<int, 2> reach = {g, g}) const {
    return wrong_in(data[static_cast<std::size_t>(b)].data(), b, count, reach);
  }
  // The same for local block b's array at `u` (laid out as the ring's own).
  int wrong_in(const double* u, int b, int count, std::array<int, 2> reach = {g, g}) const {
    const int global = globals[static_cast<std::size_t>(b)], w = width_of(global), x0 = origin_of(global);
    int bad = 0;
    for (int v = 0; v < n_vars; ++v)
      for (int i = 0; i < w + 2 * g; ++i)
        for (int j = 0; j < ny + 2 * g; ++j) {
          if (i >= g && i < g + w && j >= g && j < g + ny) continue;
          int x = (x0 + i - g + nx_total) % nx_total, y = (j - g + ny) % ny;
          double sign = 1;
          if (walls && (j < g || j >= g + ny)) {
            sign = -1;
            y = j < g ? g - 1 - j : 2 * ny - 1 - (j - g);
          }
          const bool filled =
              v < count && i >= g - reach[0] && i < g + w + reach[0] && j >= g - reach[1] && j < g + ny + reach[1];
          const double got = u[(v * (w + 2 * g) + i) * (ny + 2 * g) + j];
          if (filled ? got != sign * value_at(x, y, v) : !std::isnan(got)) ++bad;
        }
    return bad;
  }
};

struct Check {
  const Ring* ring;
  std::atomic<int> wrong{0}, calls{0};
  std::atomic<int> given_device_array{0};  // calls given a block's device array itself
};

int check_guards(const korch_item* item, double*, void* user) {
  auto* c = static_cast<Check*>(user);
  c->wrong += c->ring->wrong(item->block, 1);
  ++c->calls;
  return 0;
}

std::string last() { return korch_last_error(); }

// The code's reflecting wall in y, as a C boundary fill: a guard cell beyond the wall takes minus its
// mirror image (in a corner, a guard cell in x the exchange copied first). Records its calls and
// checks the region it is given against `reach` guard cells per side.
struct Walls {
  std::array<int, 2> reach{g, g};
  int fail_status = 0;
  std::mutex mutex;
  std::set<std::array<int, 4>> calls;  // block, direction
  std::set<std::pair<int, int>> variables;
  int wrong_regions = 0;
};

int reflect_y(const korch_item* r, const int32_t d[3], int32_t first, int32_t count, double* u, void* user) {
  auto* walls = static_cast<Walls*>(user);
  if (walls->fail_status != 0) {
    korch_routine_message("the wall is broken");
    return walls->fail_status;
  }
  {
    const std::lock_guard<std::mutex> lock(walls->mutex);
    walls->calls.insert({r->block, d[0], d[1], d[2]});
    walls->variables.insert({first, count});
    for (int a = 0; a < 3; ++a) {
      const int reach = a < 2 ? walls->reach[static_cast<std::size_t>(a)] : 0;
      const int lo = d[a] < 0 ? 1 - reach : d[a] > 0 ? r->cells[a] + 1 : 1;
      const int hi = d[a] < 0 ? 0 : d[a] > 0 ? r->cells[a] + reach : r->cells[a];
      if (r->lo[a] != lo || r->hi[a] != hi) ++walls->wrong_regions;
    }
  }
  const auto at = [&](int v, int i, int j, int k) -> double& {
    return u[v * r->stride[0] + (i - 1 + r->guard[0]) * r->stride[1] + (j - 1 + r->guard[1]) * r->stride[2] +
             (k - 1 + r->guard[2]) * r->stride[3]];
  };
  const int edge = d[1] < 0 ? 1 : r->cells[1] + 1;  // the wall lies between cells edge - 1 and edge
  for (int v = first; v < first + count; ++v)
    for (int i = r->lo[0]; i <= r->hi[0]; ++i)
      for (int j = r->lo[1]; j <= r->hi[1]; ++j)
        for (int k = r->lo[2]; k <= r->hi[2]; ++k) at(v, i, j, k) = -at(v, i, 2 * edge - 1 - j, k);
  return 0;
}

// An exchange of `ring` with its boundary fill (none if walls is null).
korch_exchange* walled_exchange(const Ring& ring, Walls* walls, const int32_t* width = nullptr) {
  korch_neighbours* near = ring.neighbours();
  korch_exchange* e = nullptr;
  REQUIRE(korch_exchange_create(ring.blocks, near, width, &e) == KORCH_OK);
  REQUIRE(korch_neighbours_destroy(near) == KORCH_OK);
  if (walls) REQUIRE(korch_exchange_set_boundary_fill(e, reflect_y, walls) == KORCH_OK);
  return e;
}

}  // namespace

TEST_CASE("C API: guard cells of a code's blocks on every rank, at once, block by block and inside a cycle") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  {
    Ring ring;
    korch_neighbours* near = ring.neighbours();
    korch_exchange* fill = nullptr;
    REQUIRE(korch_exchange_create(ring.blocks, near, nullptr, &fill) == KORCH_OK);
    const int mine = static_cast<int>(ring.globals.size());

    ring.paint();
    REQUIRE(korch_exchange_fill(fill, 0, n_vars) == KORCH_OK);
    for (int b = 0; b < mine; ++b) CHECK(ring.wrong(b, n_vars) == 0);

    ring.paint();
    int32_t block = -1;
    CHECK(korch_exchange_next(fill, &block) == KORCH_ERROR);
    CHECK(last().find("korch_exchange_start first") != std::string::npos);
    REQUIRE(korch_exchange_start(fill, 0, 1) == KORCH_OK);
    int handed = 0;
    for (;;) {
      REQUIRE(korch_exchange_next(fill, &block) == KORCH_OK);
      if (block < 0) break;
      CHECK(ring.wrong(block, 1) == 0);
      ++handed;
    }
    CHECK(handed == mine);

    ring.paint();
    korch_bundle* bundle = nullptr;
    REQUIRE(korch_bundle_create("check", &bundle) == KORCH_OK);
    Check check{&ring};
    REQUIRE(korch_bundle_add(bundle, "A", check_guards, &check) == KORCH_OK);
    korch_configuration* cpu = nullptr;
    REQUIRE(korch_configuration_builtin("cpu_only", &cpu) == KORCH_OK);
    REQUIRE(korch_execute_filled(bundle, cpu, fill, 0, 1) == KORCH_OK);
    CHECK(check.calls >= mine);
    CHECK(check.wrong == 0);

    // A neighbour id that no rank has: the same error on every rank.
    const int32_t east[3] = {1, 0, 0};
    REQUIRE(korch_neighbours_set(near, 0, east, KORCH_NEIGHBOUR_BLOCK, 99, 0) == KORCH_OK);
    korch_exchange* broken = nullptr;
    CHECK(korch_exchange_create(ring.blocks, near, nullptr, &broken) == KORCH_ERROR);
    CHECK(broken == nullptr);
    CHECK(last().find("korch_exchange_create: guard-cell exchange:") == 0);
    CHECK(last().find("names block 99") != std::string::npos);
    CHECK(korch_neighbours_set(near, 0, east, 7, 0, 0) == KORCH_ERROR);
    CHECK(last().find("KORCH_NEIGHBOUR_OUTFLOW") != std::string::npos);

    korch_configuration_destroy(cpu);
    korch_bundle_destroy(bundle);
    korch_exchange_destroy(fill);
    korch_neighbours_destroy(near);
  }
  REQUIRE(korch_finalize() == KORCH_OK);
}

TEST_CASE("C API: reflecting walls in y filled by the code's C boundary fill, at once, block by block, in a cycle") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  {
    Ring ring(true);
    const int mine = static_cast<int>(ring.globals.size());
    Walls walls;
    korch_exchange* fill = walled_exchange(ring, &walls);

    ring.paint();
    REQUIRE(korch_exchange_fill(fill, 0, n_vars) == KORCH_OK);
    for (int b = 0; b < mine; ++b) CHECK(ring.wrong(b, n_vars) == 0);
    // Each block's faces in y and the corners beyond them, once each.
    CHECK(walls.calls.size() == static_cast<std::size_t>(6 * mine));
    for (int b = 0; b < mine; ++b)
      for (const int dy : {-1, 1})
        for (const int dx : {-1, 0, 1}) CHECK(walls.calls.count({b, dx, dy, 0}) == 1);
    CHECK(walls.variables == std::set<std::pair<int, int>>{{0, n_vars}});
    CHECK(walls.wrong_regions == 0);

    ring.paint();
    REQUIRE(korch_exchange_start(fill, 0, 1) == KORCH_OK);
    CHECK(korch_exchange_set_boundary_fill(fill, reflect_y, &walls) == KORCH_ERROR);
    CHECK(last().find("has a fill in progress: set its boundary fill before korch_exchange_start") !=
          std::string::npos);
    int handed = 0;
    for (int32_t block = 0;;) {
      REQUIRE(korch_exchange_next(fill, &block) == KORCH_OK);
      if (block < 0) break;
      CHECK(ring.wrong(block, 1) == 0);
      ++handed;
    }
    CHECK(handed == mine);

    ring.paint();
    korch_bundle* bundle = nullptr;
    REQUIRE(korch_bundle_create("check walls", &bundle) == KORCH_OK);
    Check check{&ring};
    REQUIRE(korch_bundle_add(bundle, "A", check_guards, &check) == KORCH_OK);
    korch_configuration* cpu = nullptr;
    REQUIRE(korch_configuration_builtin("cpu_only", &cpu) == KORCH_OK);
    REQUIRE(korch_execute_filled(bundle, cpu, fill, 0, 1) == KORCH_OK);
    CHECK(check.calls >= mine);
    CHECK(check.wrong == 0);
    korch_configuration_destroy(cpu);
    korch_bundle_destroy(bundle);
    korch_exchange_destroy(fill);

    // One guard cell per side of the two: the fill's region is that one.
    Walls narrow;
    narrow.reach = {1, 1};
    const int32_t width[3] = {1, 1, 0};
    korch_exchange* thin = walled_exchange(ring, &narrow, width);
    ring.paint();
    REQUIRE(korch_exchange_fill(thin, 0, n_vars) == KORCH_OK);
    for (int b = 0; b < mine; ++b) CHECK(ring.wrong(b, n_vars, {1, 1}) == 0);
    CHECK(narrow.calls.size() == static_cast<std::size_t>(6 * mine));
    CHECK(narrow.wrong_regions == 0);
    korch_exchange_destroy(thin);
  }
  REQUIRE(korch_finalize() == KORCH_OK);
}

TEST_CASE("C API: walls without a boundary fill, and a boundary fill that fails, are statuses with messages") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  {
    Ring ring(true);
    korch_exchange* bare = walled_exchange(ring, nullptr);
    korch_bundle* bundle = nullptr;
    REQUIRE(korch_bundle_create("check walls", &bundle) == KORCH_OK);
    Check check{&ring};
    REQUIRE(korch_bundle_add(bundle, "A", check_guards, &check) == KORCH_OK);
    korch_configuration* cpu = nullptr;
    REQUIRE(korch_configuration_builtin("cpu_only", &cpu) == KORCH_OK);
    const auto refused = [&](const char* call) {
      CHECK(last().find(call) == 0);
      CHECK(last().find("lists mark block 0 in direction (") != std::string::npos);
      CHECK(last().find("KORCH_NEIGHBOUR_USER, but no boundary fill is set: call korch_exchange_set_boundary_fill "
                        "first") != std::string::npos);
    };
    CHECK(korch_exchange_fill(bare, 0, 1) == KORCH_ERROR);
    refused("korch_exchange_fill: ");
    CHECK(korch_exchange_start(bare, 0, 1) == KORCH_ERROR);
    refused("korch_exchange_start: ");
    CHECK(korch_execute_filled(bundle, cpu, bare, 0, 1) == KORCH_ERROR);
    refused("korch_execute_filled: ");
    CHECK(check.calls == 0);
    // Removing the fill brings the refusal back.
    Walls walls;
    REQUIRE(korch_exchange_set_boundary_fill(bare, reflect_y, &walls) == KORCH_OK);
    REQUIRE(korch_exchange_set_boundary_fill(bare, nullptr, nullptr) == KORCH_OK);
    CHECK(korch_exchange_fill(bare, 0, 1) == KORCH_ERROR);
    refused("korch_exchange_fill: ");
    CHECK(korch_exchange_set_boundary_fill(nullptr, reflect_y, &walls) == KORCH_ERROR);
    korch_exchange_destroy(bare);

    // The routine fails on every rank (each has walls); each call ends its fill before reporting, so
    // the exchange fills correctly once the routine is mended.
    Walls broken;
    broken.fail_status = 7;
    const auto failed = [&](const char* call) {
      CHECK(last().find(call) == 0);
      CHECK(last().find("the boundary fill returned status 7 on block ") != std::string::npos);
      CHECK(last().find("in direction (") != std::string::npos);
      CHECK(last().find(": the wall is broken") != std::string::npos);
    };
    const auto mended = [&](korch_exchange* e) {
      broken.fail_status = 0;
      ring.paint();
      REQUIRE(korch_exchange_fill(e, 0, n_vars) == KORCH_OK);
      for (int b = 0; b < static_cast<int>(ring.globals.size()); ++b) CHECK(ring.wrong(b, n_vars) == 0);
      broken.fail_status = 7;
    };
    korch_exchange* e = walled_exchange(ring, &broken);
    CHECK(korch_exchange_fill(e, 0, 1) == KORCH_ERROR);
    failed("korch_exchange_fill: ");
    mended(e);

    REQUIRE(korch_exchange_start(e, 0, 1) == KORCH_OK);
    int32_t block = 0;
    CHECK(korch_exchange_next(e, &block) == KORCH_ERROR);
    failed("korch_exchange_next: ");
    CHECK(block == -1);
    CHECK(korch_exchange_next(e, &block) == KORCH_ERROR);
    CHECK(last().find("korch_exchange_start first") != std::string::npos);
    mended(e);

    CHECK(korch_execute_filled(bundle, cpu, e, 0, 1) == KORCH_ERROR);
    failed("korch_execute_filled: ");
    mended(e);
    korch_exchange_destroy(e);

    korch_configuration_destroy(cpu);
    korch_bundle_destroy(bundle);
  }
  REQUIRE(korch_finalize() == KORCH_OK);
}

namespace {

// Checks variable 0's guard cells in the array the routine is given, then negates variable 1's
// interior there.
int check_and_negate(const korch_item* item, double* u, void* user) {
  auto* c = static_cast<Check*>(user);
  c->wrong += c->ring->wrong_in(u, item->block, 1);
  ++c->calls;
  if (!c->ring->device.empty() && u == c->ring->device[static_cast<std::size_t>(item->block)].data())
    ++c->given_device_array;
  for (int i = item->lo[0]; i <= item->hi[0]; ++i)
    for (int j = item->lo[1]; j <= item->hi[1]; ++j) {
      double& x = u[item->stride[0] + (i - 1 + g) * item->stride[1] + (j - 1 + g) * item->stride[2]];
      x = -x;
    }
  return 0;
}

}  // namespace

TEST_CASE("C API: blocks in device memory: guard cells filled there, host routines' writes reach the arrays") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  for (const bool walls : {false, true}) {
    CAPTURE(walls);
    Ring ring(walls, true);
    Walls fill_walls;
    korch_exchange* fill = walled_exchange(ring, walls ? &fill_walls : nullptr);
    const int mine = static_cast<int>(ring.globals.size());
    ring.paint();
    ring.upload();
    REQUIRE(korch_exchange_fill(fill, 0, n_vars) == KORCH_OK);
    ring.download();
    for (int b = 0; b < mine; ++b) CHECK(ring.wrong(b, n_vars) == 0);

    // In a cycle a host routine gets a host copy with the filled guard cells; what it writes is in
    // the device arrays when korch_execute_filled returns.
    ring.paint();
    ring.upload();
    korch_bundle* bundle = nullptr;
    REQUIRE(korch_bundle_create("negate", &bundle) == KORCH_OK);
    Check check{&ring};
    REQUIRE(korch_bundle_add(bundle, "A", check_and_negate, &check) == KORCH_OK);
    korch_configuration* cpu = nullptr;
    REQUIRE(korch_configuration_builtin("cpu_only", &cpu) == KORCH_OK);
    REQUIRE(korch_execute_filled(bundle, cpu, fill, 0, 1) == KORCH_OK);
    CHECK(check.calls >= mine);
    CHECK(check.wrong == 0);
    CHECK(check.given_device_array == 0);
    ring.download();
    int negated = 0;
    for (int b = 0; b < mine; ++b) {
      const int global = ring.globals[static_cast<std::size_t>(b)], w = width_of(global), x0 = origin_of(global);
      for (int i = 0; i < w; ++i)
        for (int j = 0; j < ny; ++j)
          negated += ring.data[static_cast<std::size_t>(b)][static_cast<std::size_t>(
                         ((w + 2 * g) + i + g) * (ny + 2 * g) + j + g)] == -value_at(x0 + i, j, 1);
    }
    int cells = 0;
    for (int b = 0; b < mine; ++b) cells += width_of(ring.globals[static_cast<std::size_t>(b)]) * ny;
    CHECK(negated == cells);
    korch_configuration_destroy(cpu);
    korch_bundle_destroy(bundle);
    korch_exchange_destroy(fill);

    // One list, one memory: a host array after device ones is refused, naming both memories.
    if (mine > 0) {
      std::vector<double> host(ring.data.front().size());
      korch_block_shape shape{{5, ny, 1}, {g, g, 0}, {0, 0, 0}, 0, 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
      const int64_t extent[4] = {n_vars, 5 + 2 * g, ny + 2 * g, 1};
      CHECK(korch_blocks_add_global(ring.blocks, &shape, 100, host.data(), extent, KORCH_C_ORDER, nullptr) ==
            KORCH_ERROR);
      CHECK(last().find("is an array in host memory but the list's blocks are in device memory") != std::string::npos);
      CHECK(korch_blocks_add_device(ring.blocks, &shape, -2, host.data(), extent, KORCH_C_ORDER, nullptr) ==
            KORCH_ERROR);
      CHECK(last().find("global_id is -2") != std::string::npos);
    }
  }
  REQUIRE(korch_finalize() == KORCH_OK);
}
