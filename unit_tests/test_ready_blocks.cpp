// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// ReadyBlocks (docs/data-sources.md, "A code's own guard-cell fill"): a code that fills its blocks'
// guard cells itself marks each block ready, from the poll routine or another thread, and the
// cycle's actions see every guard cell filled; blocks go out while others are still missing; wrong
// marks and a fill that never finishes are errors naming the blocks, after which the next cycle
// runs as usual.
#include "test_runtime_support.hpp"

#include <korch/block_list.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/ready_blocks.hpp>
#include <korch/runtime.hpp>
#include <korch/tile.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_ready_blocks {

using namespace korch;
using namespace korch::test;

namespace {

// A code's ring of 2-D blocks, periodic in x, each a Fortran array u(i, j, var) of 13 x 9 interior
// cells and one guard cell in x; variable 0 the state, variable 1 what the action writes.
struct Ring {
  static constexpr int nx = 13, ny = 9, sx = nx + 2;
  int n_blocks;
  std::vector<std::vector<double>> u;
  BlockList list{"ring", 2};

  explicit Ring(int blocks) : n_blocks(blocks) {
    for (int b = 0; b < n_blocks; ++b) {
      u.emplace_back(static_cast<std::size_t>(sx * ny * 2), -1.0);
      for (int i = 1; i <= nx; ++i)
        for (int j = 0; j < ny; ++j) at(b, 0, i, j) = 100.0 * b + i + 0.01 * j;
      BlockShape shape;
      shape.cells = {nx, ny, 1};
      shape.guard = {1, 0, 0};
      shape.tile_cells = {5, 4, 0};
      list.add(shape,
               BlockArray::of(u.back().data(), IndexOrder::i_j_k_var, {sx, ny, 1, 2}, {1, sx, sx * ny, sx * ny}));
    }
  }
  double& at(int b, int var, int i, int j) {
    return u[static_cast<std::size_t>(b)][static_cast<std::size_t>(i + sx * (j + ny * var))];
  }
  // The code's own fill of block b: its x guard cells from its periodic neighbours' edges.
  void fill(int b) {
    const int left = (b + n_blocks - 1) % n_blocks, right = (b + 1) % n_blocks;
    for (int j = 0; j < ny; ++j) {
      at(b, 0, 0, j) = at(left, 0, nx, j);
      at(b, 0, nx + 1, j) = at(right, 0, 1, j);
    }
  }
  // What the action gives with every guard cell filled.
  double expected(int b, int i, int j) {
    const int left = (b + n_blocks - 1) % n_blocks, right = (b + 1) % n_blocks;
    const double lo = i == 1 ? at(left, 0, nx, j) : at(b, 0, i - 1, j);
    const double hi = i == nx ? at(right, 0, 1, j) : at(b, 0, i + 1, j);
    return lo + hi;
  }
  bool all_right() {
    for (int b = 0; b < n_blocks; ++b)
      for (int i = 1; i <= nx; ++i)
        for (int j = 0; j < ny; ++j)
          if (at(b, 1, i, j) != expected(b, i, j)) return false;
    return true;
  }
};

// u1 = u0(i - 1) + u0(i + 1): reads the guard cells at the tile's edges of the block.
Bundle stencil_bundle() {
  Bundle bundle("ready blocks");
  bundle.add(ActionRoutine("A", [](const ActionContext&, DataItem& item) {
    auto& t = dynamic_cast<Tile&>(item);
    const BlockView v = t.view();
    const Box& box = t.box();
    for (int i = box.lo[0]; i < box.hi[0]; ++i)
      for (int j = box.lo[1]; j < box.hi[1]; ++j) v(1, i, j, 0) = v(0, i - 1, j, 0) + v(0, i + 1, j, 0);
  }));
  return bundle;
}

}  // namespace

TEST_CASE("Ready blocks: blocks marked by the poll routine as the code's fill completes them, in a random order") {
  Runtime rt;
  Ring ring(8);
  std::mt19937 random(7);
  std::vector<int> pending;
  ReadyBlocks ready([&](ReadyBlocks& r) {
    if (pending.empty()) return;
    const std::size_t pick = random() % pending.size();  // one halo "arrives" per poll
    const int b = pending[pick];
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(pick));
    ring.fill(b);
    r.mark_ready(b);
  });
  for (int cycle = 0; cycle < 3; ++cycle) {
    CAPTURE(cycle);
    pending.clear();
    for (int b = 0; b < ring.n_blocks; ++b) pending.push_back(b);
    for (int b = 0; b < ring.n_blocks; ++b)
      for (int j = 0; j < Ring::ny; ++j) ring.at(b, 0, 0, j) = ring.at(b, 0, Ring::nx + 1, j) = -1e30;  // stale
    rt.execute(stencil_bundle(), configurations::get("cpu_only"), ring.list, &ready);
    CHECK(ring.all_right());
    CHECK(ready.handed_out_early() > 0);  // the teams started before the last halo arrived
  }
}

TEST_CASE("Ready blocks: another thread marks the blocks; marks made before the cycle count for it") {
  Runtime rt;
  Ring ring(6);
  ReadyBlocks ready;  // no poll routine: the code's own thread marks
  ring.fill(0);
  ready.mark_ready(0);  // before the cycle starts
  std::thread code([&] {
    for (int b = ring.n_blocks - 1; b >= 1; --b) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ring.fill(b);
      ready.mark_ready(b);
    }
  });
  const auto run = [&] { rt.execute(stencil_bundle(), configurations::get("cpu_only"), ring.list, &ready); };
  CHECK_NOTHROW(run());
  code.join();
  CHECK(ring.all_right());
}

TEST_CASE("Ready blocks: wrong marks and a fill that stalls fail the cycle naming the blocks; the next cycle runs") {
  Runtime rt;
  Ring ring(8);
  for (int b = 0; b < ring.n_blocks; ++b) ring.fill(b);
  const Bundle bundle = stencil_bundle();
  const Configuration cpu = configurations::get("cpu_only");
  ReadyBlocks::Options quick;
  quick.stall_limit = std::chrono::milliseconds(50);

  SUBCASE("a block marked twice before the cycle") {
    ReadyBlocks ready;
    ready.mark_ready(3);
    CHECK_THROWS_WITH_AS(ready.mark_ready(3), doctest::Contains("block 3 was marked ready twice before the cycle"),
                         Error);
    CHECK_THROWS_WITH_AS(ready.mark_ready(-1), doctest::Contains("ids start at 0"), Error);
  }
  SUBCASE("a block the list does not have") {
    ReadyBlocks ready;
    ready.mark_ready(40);
    CHECK_THROWS_WITH_AS(rt.execute(bundle, cpu, ring.list, &ready),
                         doctest::Contains("block 40 was marked ready, but the block list 'ring' has blocks 0..7"),
                         Error);
  }
  SUBCASE("a block marked twice in the cycle") {
    ReadyBlocks ready([](ReadyBlocks& r) {
      r.mark_ready(0);
      r.mark_ready(0);
    });
    CHECK_THROWS_WITH_AS(rt.execute(bundle, cpu, ring.list, &ready),
                         doctest::Contains("block 0 of the block list 'ring' was marked ready twice in one cycle"),
                         Error);
  }
  SUBCASE("a fill that never completes block 5") {
    int next = 0;
    ReadyBlocks ready(
        [&](ReadyBlocks& r) {
          if (next == 5) ++next;
          if (next < ring.n_blocks) r.mark_ready(next++);
        },
        quick);
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH_AS(rt.execute(bundle, cpu, ring.list, &ready),
                         doctest::Contains("for 50 ms, with 1 of 8 unmarked (blocks 5)"), Error);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));
  }
  SUBCASE("no poll routine and no thread that marks") {
    ReadyBlocks ready({}, quick);
    CHECK_THROWS_WITH_AS(rt.execute(bundle, cpu, ring.list, &ready),
                         doctest::Contains("with 8 of 8 unmarked (blocks 0, 1, 2, 3, 4, 5, 6, 7)"), Error);
  }
  SUBCASE("the code's poll routine throws") {
    ReadyBlocks ready([](ReadyBlocks&) { throw std::runtime_error("halo request 12 failed"); });
    CHECK_THROWS_WITH_AS(rt.execute(bundle, cpu, ring.list, &ready), doctest::Contains("halo request 12 failed"),
                         std::exception);
  }
  // After any of them: the same runtime and list run a cycle whose blocks are all marked.
  ReadyBlocks ready;
  for (int b = 0; b < ring.n_blocks; ++b) ready.mark_ready(b);
  rt.execute(bundle, cpu, ring.list, &ready);
  CHECK(ring.all_right());
  CHECK_THROWS_WITH_AS(ReadyBlocks({}, ReadyBlocks::Options{std::chrono::milliseconds(-1), {}}),
                       doctest::Contains("stall limit -1 ms"), Error);
}

TEST_CASE("Ready blocks: a list re-listed between cycles, and the other configurations") {
  Runtime rt;
  Ring ring(8);
  ReadyBlocks ready;
  const auto mark_all = [&](Ring& r) {
    for (int b = 0; b < r.n_blocks; ++b) {
      r.fill(b);
      ready.mark_ready(b);
    }
  };
  mark_all(ring);
  rt.execute(stencil_bundle(), configurations::get("cpu_only"), ring.list, &ready);
  CHECK(ring.all_right());
  // The code changed its mesh: five blocks now, listed anew.
  Ring smaller(5);
  mark_all(smaller);
  rt.execute(stencil_bundle(), configurations::get("cpu_only"), smaller.list, &ready);
  CHECK(smaller.all_right());
  // Device packets and split work take their blocks in the marked order too.
  for (const char* name : {"gpu_only", "cpu_gpu_data_parallel"}) {
    CAPTURE(name);
    Ring a(7), b(7);
    const Bundle affine = [] {
      Bundle bundle("affine");
      bundle.add(affine_routine({"A", 1, 0, 2.0, 0.0, 1.0}, nullptr));
      return bundle;
    }();
    for (int block = 6; block >= 0; --block) ready.mark_ready(block);
    rt.execute(affine, configurations::get(name), a.list, &ready);
    rt.execute(affine, configurations::get(name), b.list);
    CHECK(a.u == b.u);
  }
}

}  // namespace test_ready_blocks
