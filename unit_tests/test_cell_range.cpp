// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/backend/cell_range.hpp>
#include <korch/backend/spaces.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/error.hpp>

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace {

using Extents4 = std::array<std::int64_t, 4>;

// How often a cell_policy<4> on the backend's space visits each index of an (a, b, c, d) box
// starting at `lo`, counted into a View of the whole box from 0.
Kokkos::View<int****, Kokkos::LayoutRight, Kokkos::HostSpace> visits(const Extents4& lo, const Extents4& hi) {
  Kokkos::View<int****, Kokkos::LayoutRight, korch::DeviceMemSpace> count("visits", hi[0], hi[1], hi[2], hi[3]);
  Kokkos::parallel_for(
      "test.cell_policy", korch::cell_policy<4>(korch::DeviceExecSpace(), lo, hi),
      KOKKOS_LAMBDA(int e, int i, int j, int k) { Kokkos::atomic_add(&count(e, i, j, k), 1); });
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), count);
}

}  // namespace

TEST_CASE("CellRange: a flat index is (box, i, j, k) with k fastest, over boxes of any extents") {
  const int n[3] = {2, 3, 5};
  const korch::CellRange range(3, n);
  CHECK(range.size() == 90);
  std::int64_t t = 0;
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 5; ++k, ++t) {
          int box, ci, cj, ck;
          range.cell(t, box, ci, cj, ck);
          REQUIRE(box == b);
          REQUIRE(ci == i);
          REQUIRE(cj == j);
          REQUIRE(ck == k);
        }
  const int flat[3] = {7, 1, 1};
  int box, i, j, k;
  korch::CellRange(2, flat).cell(12, box, i, j, k);
  CHECK((box == 1 && i == 5 && j == 0 && k == 0));
  CHECK(korch::CellRange(4, flat).size() == 28);
  const int none[3] = {4, 0, 4};
  CHECK(korch::CellRange(5, none).size() == 0);
}

TEST_CASE("CellRange: negative counts and boxes of 2^31 cells or more are errors naming the sizes") {
  const int negative[3] = {4, -1, 4};
  CHECK_THROWS_WITH_AS(korch::CellRange(2, negative),
                       "cell range: 2 boxes of 4 x -1 x 4 cells: give counts >= 0 and boxes of fewer than 2^31 cells",
                       korch::Error);
  const int huge[3] = {2048, 2048, 512};
  CHECK_THROWS_AS(korch::CellRange(1, huge), korch::Error);
  const int largest[3] = {2048, 2048, 511};
  CHECK(korch::CellRange(3, largest).size() == 3LL * 2048 * 2048 * 511);
}

TEST_CASE("gpu_cell_tiles: a warp reads rows of contiguous cells, few threads fall past their end") {
  using korch::gpu_cell_tiles;
  // 3-D blocks of 32^3 with 3 guard cells: 38 = 5 tiles of 8 (2 idle), 4 rows of them per warp.
  CHECK(gpu_cell_tiles<4>({16, 38, 38, 38}, 32) == Extents4{1, 1, 4, 8});
  // Their faces along k: 33 needs 5 tiles of 8 (7 idle), not 2 of 32 (31 idle).
  CHECK(gpu_cell_tiles<4>({16, 32, 32, 33}, 32) == Extents4{1, 1, 4, 8});
  CHECK(gpu_cell_tiles<4>({16, 32, 32, 32}, 32) == Extents4{1, 1, 1, 32});
  CHECK(gpu_cell_tiles<4>({16, 32, 32, 32}, 64) == Extents4{1, 1, 2, 32});
  // 2-D blocks stored with extent 1 along k: j is the contiguous index.
  CHECK(gpu_cell_tiles<4>({16, 262, 262, 1}, 32) == Extents4{1, 1, 32, 1});
  CHECK(gpu_cell_tiles<4>({16, 130, 130, 1}, 32) == Extents4{1, 2, 16, 1});
  // Short rows: a power of two at or above them; the indices before them take the rest.
  CHECK(gpu_cell_tiles<4>({64, 3, 5, 1}, 32) == Extents4{1, 4, 8, 1});
  CHECK(gpu_cell_tiles<4>({64, 3, 5, 1}, 64) == Extents4{2, 4, 8, 1});
  CHECK(gpu_cell_tiles<3>({7, 3, 1}, 32) == std::array<std::int64_t, 3>{8, 4, 1});
  CHECK(gpu_cell_tiles<4>({1, 1, 1, 1}, 32) == Extents4{1, 1, 1, 1});
  CHECK(gpu_cell_tiles<4>({0, 0, 0, 0}, 32) == Extents4{1, 1, 1, 1});
  CHECK(gpu_cell_tiles<4>({16, 38, 38, 38}) == gpu_cell_tiles<4>({16, 38, 38, 38}, korch::gpu_warp_threads));
}

TEST_CASE("cell_policy: every index of the box once, none outside it, for odd extents and offsets") {
  for (const auto& [lo, hi] : {std::pair<Extents4, Extents4>{{0, 0, 0, 0}, {3, 5, 7, 1}},
                               std::pair<Extents4, Extents4>{{1, 2, 0, 3}, {4, 41, 3, 38}},
                               std::pair<Extents4, Extents4>{{0, 1, 1, 0}, {2, 1, 9, 9}}}) {
    CAPTURE(hi[3]);
    const auto count = visits(lo, hi);
    int wrong = 0;
    for (int e = 0; e < hi[0]; ++e)
      for (int i = 0; i < hi[1]; ++i)
        for (int j = 0; j < hi[2]; ++j)
          for (int k = 0; k < hi[3]; ++k) {
            const bool inside = e >= lo[0] && i >= lo[1] && j >= lo[2] && k >= lo[3];
            wrong += count(e, i, j, k) != (inside ? 1 : 0);
          }
    CHECK(wrong == 0);
  }
}

namespace {

// A kernel whose functor is larger than 512 bytes, as a PacketPack's is: Kokkos 3.4 would pass it
// through its one constant-memory buffer unless the policy carries ConcurrentLaunchHint.
struct LargeFunctor {
  static constexpr int n_weights = 96;  // 768 bytes
  Kokkos::View<double*, korch::DeviceMemSpace> out;
  double weights[n_weights];
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t t) const { out(t) = weights[t % n_weights]; }
};

}  // namespace

TEST_CASE("CellRange: large functors launched by several team threads at once each run their own") {
  constexpr int threads = 8, rounds = 40;
  constexpr int cells[3] = {4, 16, 64};
  const korch::CellRange range(4, cells);
  using Out = Kokkos::View<double*, korch::DeviceMemSpace>;
  // Instances and arrays made here, as a team makes its threads' (Kokkos 3.4 allocates and
  // initializes Views on the thread that initialized it).
  std::vector<std::unique_ptr<korch::ThreadSpaces>> spaces;
  std::vector<Out> outs;
  std::vector<Kokkos::View<double*, Kokkos::HostSpace>> copies;
  for (int t = 0; t < threads; ++t) {
    spaces.push_back(std::make_unique<korch::ThreadSpaces>());
    outs.emplace_back("large functor out", range.size());
    copies.emplace_back("large functor out (host)", range.size());
  }
  std::vector<int> wrong(threads, 0);
  std::vector<std::thread> team;
  for (int t = 0; t < threads; ++t)
    team.emplace_back([&, t] {
      const auto& device = spaces[static_cast<std::size_t>(t)]->device();
      const auto& copy = copies[static_cast<std::size_t>(t)];
      LargeFunctor f;
      f.out = outs[static_cast<std::size_t>(t)];
      for (int round = 0; round < rounds; ++round) {
        const double value = 1000.0 * t + round;
        for (int w = 0; w < LargeFunctor::n_weights; ++w) f.weights[w] = value + 1e-3 * w;
        Kokkos::parallel_for("test.large functor", range.policy(device), f);
        Kokkos::deep_copy(device, copy, f.out);
        device.fence();
        for (std::int64_t c = 0; c < range.size(); ++c)
          if (copy(c) != value + 1e-3 * static_cast<double>(c % LargeFunctor::n_weights)) {
            ++wrong[static_cast<std::size_t>(t)];
            break;
          }
      }
    });
  for (auto& th : team) th.join();
  for (int t = 0; t < threads; ++t) {
    CAPTURE(t);
    CHECK(wrong[static_cast<std::size_t>(t)] == 0);
  }
}
