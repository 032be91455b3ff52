// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A code that changes its own mesh lists its blocks anew through the C API (korch_blocks_clear):
// the next cycle runs the new blocks and never an old one, an exchange made for the old blocks is
// refused, a new one fills the new blocks, and clearing the blocks a cycle uses is refused. Each
// rank lists a periodic row of blocks of its own (runs as one process and under mpirun).
#include <korch/korch_c.h>

#include <doctest/doctest.h>

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_c_api_relist {

namespace {

constexpr int row = 12, ny = 2, g = 1;  // the row's cells in x, cells in y, guard cells per side

// The code's mesh: a periodic row of `width`-cell blocks in C order (one variable: u[i][j]),
// interior cell x holding x + 1, guard cells 0 until filled.
struct Row {
  int width, rank = 0, size = 1;
  std::vector<std::vector<double>> data;

  explicit Row(int block_width) : width(block_width) {
    korch_ranks(&rank, &size);
    for (int b = 0; b < row / width; ++b) {
      data.emplace_back(static_cast<std::size_t>((width + 2 * g) * (ny + 2 * g)), 0.0);
      for (int i = 0; i < width; ++i)
        for (int j = 0; j < ny; ++j) at(b, i + g, j + g) = b * width + i + 1;
    }
  }
  double& at(int b, int i, int j) {
    return data[static_cast<std::size_t>(b)][static_cast<std::size_t>(i * (ny + 2 * g) + j)];
  }
  int global(int b) const { return 1000 * rank + b; }

  void list(korch_blocks* blocks) {
    for (int b = 0; b < static_cast<int>(data.size()); ++b) {
      korch_block_shape shape{{width, ny, 1}, {g, g, 0}, {0, 0, 0}, 0, 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
      const int64_t extent[4] = {1, width + 2 * g, ny + 2 * g, 1};
      int32_t id = -1;
      REQUIRE(korch_blocks_add_global(blocks, &shape, global(b), data[static_cast<std::size_t>(b)].data(), extent,
                                      KORCH_C_ORDER, &id) == KORCH_OK);
      CHECK(id == b);
    }
  }
  // Periodic in x (neighbours on this rank), nothing filled in y.
  korch_exchange* exchange(korch_blocks* blocks) const {
    korch_neighbours* near = nullptr;
    REQUIRE(korch_neighbours_create(2, &near) == KORCH_OK);
    const int n = static_cast<int>(data.size());
    for (int b = 0; b < n; ++b)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (dx == 0 && dy == 0) continue;
          const int32_t direction[3] = {dx, dy, 0};
          const int other = (b + dx + n) % n;
          REQUIRE(korch_neighbours_set(near, b, direction, dy == 0 ? KORCH_NEIGHBOUR_BLOCK : KORCH_NEIGHBOUR_NONE,
                                       global(other), rank) == KORCH_OK);
        }
    korch_exchange* e = nullptr;
    REQUIRE(korch_exchange_create(blocks, near, nullptr, &e) == KORCH_OK);
    korch_neighbours_destroy(near);
    return e;
  }
  // x guard cells that do not hold the periodic neighbour's cell.
  int wrong_guards() {
    int wrong = 0;
    for (int b = 0; b < static_cast<int>(data.size()); ++b)
      for (int j = g; j < g + ny; ++j) {
        wrong += at(b, 0, j) != (b * width - 1 + row) % row + 1;
        wrong += at(b, width + g, j) != ((b + 1) * width) % row + 1;
      }
    return wrong;
  }
};

// What the cycle's routine saw: (block, cells in x) pairs, and what clearing the blocks returned.
struct Seen {
  korch_blocks* blocks = nullptr;
  std::mutex mutex;
  std::set<std::pair<int, int>> items;
  std::vector<int> clear_status;
};

int record(const korch_item* item, double*, void* user) {
  auto* seen = static_cast<Seen*>(user);
  const int status = korch_blocks_clear(seen->blocks);  // refused: the cycle uses them
  const std::lock_guard<std::mutex> lock(seen->mutex);
  seen->items.insert({item->block, item->cells[0]});
  seen->clear_status.push_back(status);
  return 0;
}

}  // namespace

TEST_CASE("C API: a code re-lists its blocks after changing its mesh; cycles and exchanges follow") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  korch_blocks* blocks = nullptr;
  REQUIRE(korch_blocks_create("relisted row", 1, &blocks) == KORCH_OK);
  Row before(4);
  before.list(blocks);
  korch_exchange* old_fill = before.exchange(blocks);
  REQUIRE(korch_exchange_fill(old_fill, 0, 1) == KORCH_OK);
  CHECK(before.wrong_guards() == 0);

  korch_bundle* bundle = nullptr;
  REQUIRE(korch_bundle_create("record", &bundle) == KORCH_OK);
  Seen seen;
  seen.blocks = blocks;
  REQUIRE(korch_bundle_add(bundle, "A", record, &seen) == KORCH_OK);
  korch_configuration* cpu = nullptr;
  REQUIRE(korch_configuration_builtin("cpu_only", &cpu) == KORCH_OK);
  REQUIRE(korch_execute(bundle, cpu, blocks, KORCH_ALL_BLOCKS, 0) == KORCH_OK);
  CHECK(seen.items == std::set<std::pair<int, int>>{{0, 4}, {1, 4}, {2, 4}});
  for (const int status : seen.clear_status) CHECK(status == KORCH_ERROR);

  // The code regrids: two blocks of 6 cells over the same row.
  Row after(6);
  REQUIRE(korch_blocks_clear(blocks) == KORCH_OK);
  after.list(blocks);
  seen.items.clear();
  REQUIRE(korch_execute(bundle, cpu, blocks, KORCH_ALL_BLOCKS, 0) == KORCH_OK);
  CHECK(seen.items == std::set<std::pair<int, int>>{{0, 6}, {1, 6}});
  CHECK(korch_exchange_fill(old_fill, 0, 1) == KORCH_ERROR);
  CHECK(std::string(korch_last_error()).find("changed since the exchange was made") != std::string::npos);
  korch_exchange* new_fill = after.exchange(blocks);
  REQUIRE(korch_exchange_fill(new_fill, 0, 1) == KORCH_OK);
  CHECK(after.wrong_guards() == 0);
  CHECK(korch_blocks_clear(nullptr) == KORCH_ERROR);

  korch_exchange_destroy(new_fill);
  korch_exchange_destroy(old_fill);
  korch_configuration_destroy(cpu);
  korch_bundle_destroy(bundle);
  korch_blocks_destroy(blocks);
  REQUIRE(korch_finalize() == KORCH_OK);
}

}  // namespace test_c_api_relist
