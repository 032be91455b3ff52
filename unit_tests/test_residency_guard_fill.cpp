// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The guard-cell fill of a resident grid (docs/residency.md, "Guard cells"): each block is filled
// on the side that holds it, only guard-cell sources cross between host and device, and whatever
// sequence of host cycles, device cycles, host accessors and fills runs, every cell equals the same
// sequence's on a non-resident grid.
#include "test_runtime_support.hpp"

#include <korch/communicator.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/decomposition.hpp>
#include <korch/grid_residency.hpp>
#include <korch/guard_cell_exchange.hpp>
#include <korch/runtime.hpp>

#include <array>
#include <random>
#include <string>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_residency_guard_fill {

using namespace korch;
using namespace korch::test;

namespace {

// 2-D blocks of odd sizes with two guard cells, three variables.
GridSpec fill_spec(bool resident) {
  GridSpec s;
  s.block_cells = {7, 5, 1};
  s.blocks = {3, 2, 1};
  s.guard = 2;
  s.guard_dims = 2;
  s.n_vars = 3;
  s.resident = resident;
  return s;
}

// Every stored double (guard cells included) has the same bits; reads a copy of the resident grid,
// so that the device copies keep their validity.
bool same_cells(const Grid& resident, const Grid& plain) {
  const Grid copy = resident.clone();
  auto x = copy.data();
  auto y = plain.data();
  for (std::size_t n = 0; n < x.size(); ++n)
    if (x.data()[n] != y.data()[n]) return false;
  return true;
}

Bundle affine_bundle(const Affine& f) {
  Bundle b("residency fill");
  b.add(affine_routine(f, nullptr));
  return b;
}

// Both grids and their exchanges, driven through the same operations.
struct Pair {
  explicit Pair(BoundaryKind boundary)
      : resident(fill_spec(true)),
        plain(fill_spec(false)),
        decomposition(fill_spec(false).blocks, 1),
        resident_fill(resident, decomposition, {boundary, boundary, boundary}, Communicator::world()),
        plain_fill(plain, decomposition, {boundary, boundary, boundary}, Communicator::world()) {
    fill_pattern(resident);
    fill_pattern(plain);
  }
  void execute(Runtime& rt, const Bundle& bundle, const Configuration& c) {
    rt.execute(bundle, c, resident);
    rt.execute(bundle, c, plain);
  }
  void fill(int first, int count) {
    resident_fill.fill(first, count);
    plain_fill.fill(first, count);
  }
  Grid resident, plain;
  Decomposition decomposition;
  GuardCellExchange resident_fill, plain_fill;
};

const Affine device_update{"A", 0, 1, 0.5, 0.75, 0.125};  // u0 = 0.5 u1 + 0.75 u0 + 0.125

}  // namespace

TEST_CASE("Residency fill: between device cycles the guard cells are filled on the device, nothing moves") {
  Runtime rt;
  Pair p(BoundaryKind::periodic);
  const Configuration gpu = configurations::get("gpu_only");
  const Bundle bundle = affine_bundle(device_update);
  for (int step = 0; step < 3; ++step) {
    CAPTURE(step);
    p.execute(rt, bundle, gpu);
    const TransferBytes before = p.resident.residency_transfers();
    p.fill(0, 3);
    CHECK(p.resident.residency_transfers().total() == before.total());
    CHECK(p.resident_fill.device_transfers().total() == 0);
    for (int b = 0; b < p.resident.n_blocks(); ++b) {
      CHECK(p.resident.residency()->device_valid(b, 0));
      CHECK_FALSE(p.resident.residency()->host_valid(b, 0));  // the fill wrote the device's guard cells
    }
    CHECK(same_cells(p.resident, p.plain));
  }
}

TEST_CASE("Residency fill: blocks on both sides exchange guard cells only") {
  Runtime rt;
  Pair p(BoundaryKind::outflow);
  p.execute(rt, affine_bundle(device_update), configurations::get("gpu_only"));
  for (const int b : {1, 2, 5}) (void)p.resident.block_view(b);  // these come back to the host
  const TransferBytes before = p.resident.residency_transfers();
  p.fill(0, 3);
  CHECK(p.resident.residency_transfers().total() == before.total());
  const std::uint64_t one_block = 3 * p.resident.residency()->doubles_per_var() * sizeof(double);
  const TransferBytes staged = p.resident_fill.device_transfers();
  CHECK(staged.host_to_device > 0);
  CHECK(staged.device_to_host > 0);
  CHECK(staged.total() < 2 * one_block);
  CHECK(p.resident.residency()->host_valid(1, 0));
  CHECK_FALSE(p.resident.residency()->host_valid(0, 0));
  CHECK(same_cells(p.resident, p.plain));
}

TEST_CASE("Residency fill: a random sequence of cycles, accessors and fills never reads a stale copy") {
  Runtime rt;
  const std::array<std::string, 3> names = {"cpu_only", "gpu_only", "cpu_gpu_data_parallel"};
  std::vector<Configuration> configurations;
  for (const auto& n : names) configurations.push_back(configurations::get(n));
  const std::array<Affine, 3> updates = {device_update, Affine{"A", 1, 0, 0.25, 0.5, -0.5},
                                         Affine{"A", 2, 1, -0.5, 1.0, 0.75}};
  for (const BoundaryKind boundary : {BoundaryKind::periodic, BoundaryKind::outflow}) {
    Pair p(boundary);
    std::mt19937 random(boundary == BoundaryKind::periodic ? 17u : 29u);
    for (int op = 0; op < 60; ++op) {
      CAPTURE(op);
      const int kind = static_cast<int>(random() % 4);
      if (kind == 0) {
        p.execute(rt, affine_bundle(updates[random() % 3]), configurations[random() % 3]);
      } else if (kind == 1) {
        const int first = static_cast<int>(random() % 3);
        p.fill(first, 1 + static_cast<int>(random() % static_cast<unsigned>(3 - first)));
      } else if (kind == 2) {
        const int b = static_cast<int>(random() % 6);
        auto view = p.resident.block_view(b);  // the host writes a cell of it
        auto plain = p.plain.block_view(b);
        view(1, 3, 3, 0) += 1.0;
        plain(1, 3, 3, 0) += 1.0;
      } else if (random() % 4 == 0) {
        REQUIRE(same_cells(p.resident, p.plain));
      }
    }
    CHECK(same_cells(p.resident, p.plain));
  }
}

}  // namespace test_residency_guard_fill
