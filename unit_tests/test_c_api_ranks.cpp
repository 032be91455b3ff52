// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API's ranks and guard cells (korch/korch_c.h) from C++: a ring of C-ordered blocks of two
// widths, each rank adding its own with global ids, filled at once, block by block and inside a
// cycle; mistakes come back as statuses with messages. Runs as one process and under mpirun.
#include <korch/korch_c.h>

#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <string>
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

struct Ring {
  int rank = 0, size = 1;
  std::vector<int> globals;               // per local block
  std::vector<std::vector<double>> data;  // u[var][i][j][1]
  korch_blocks* blocks = nullptr;

  Ring() {
    REQUIRE(korch_ranks(&rank, &size) == KORCH_OK);
    REQUIRE(korch_blocks_create("c ring", n_vars, &blocks) == KORCH_OK);
    for (int global = 0; global < n_blocks; ++global) {
      if (global * size / n_blocks != rank) continue;
      const int w = width_of(global);
      data.emplace_back(static_cast<std::size_t>(n_vars * (w + 2 * g) * (ny + 2 * g)));
      korch_block_shape shape{{w, ny, 1}, {g, g, 0}, {0, 0, 0}, 0, 1, {0, 0, 0}, {1, 1, 1}};
      const int64_t extent[4] = {n_vars, w + 2 * g, ny + 2 * g, 1};
      int32_t id = -1;
      REQUIRE(korch_blocks_add_global(blocks, &shape, global, data.back().data(), extent, KORCH_C_ORDER, &id) ==
              KORCH_OK);
      globals.push_back(global);
    }
  }
  ~Ring() { korch_blocks_destroy(blocks); }

  korch_neighbours* neighbours() const {
    korch_neighbours* n = nullptr;
    REQUIRE(korch_neighbours_create(2, &n) == KORCH_OK);
    for (int b = 0; b < static_cast<int>(globals.size()); ++b)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (dx == 0 && dy == 0) continue;
          const int other = (globals[static_cast<std::size_t>(b)] + dx + n_blocks) % n_blocks;
          const int32_t direction[3] = {dx, dy, 0};
          REQUIRE(korch_neighbours_set(n, b, direction, KORCH_NEIGHBOUR_BLOCK, other, other * size / n_blocks) ==
                  KORCH_OK);
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

  // Guard cells of variables [0, count) of local block b that are not the periodic neighbour's.
  int wrong(int b, int count) const {
    const int global = globals[static_cast<std::size_t>(b)], w = width_of(global), x0 = origin_of(global);
    int bad = 0;
    for (int v = 0; v < count; ++v)
      for (int i = 0; i < w + 2 * g; ++i)
        for (int j = 0; j < ny + 2 * g; ++j) {
          if (i >= g && i < g + w && j >= g && j < g + ny) continue;
          const int x = (x0 + i - g + nx_total) % nx_total, y = (j - g + ny) % ny;
          if (data[static_cast<std::size_t>(b)][static_cast<std::size_t>((v * (w + 2 * g) + i) * (ny + 2 * g) + j)] !=
              value_at(x, y, v))
            ++bad;
        }
    return bad;
  }
};

struct Check {
  const Ring* ring;
  std::atomic<int> wrong{0}, calls{0};
};

int check_guards(const korch_item* item, double*, void* user) {
  auto* c = static_cast<Check*>(user);
  c->wrong += c->ring->wrong(item->block, 1);
  ++c->calls;
  return 0;
}

std::string last() { return korch_last_error(); }

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
