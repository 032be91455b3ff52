// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The decomposition of a grid over ranks, the guard-cell exchange and the asynchronous guard-cell
// iterator. Runs as one process and under mpirun (every rank runs every case, with its own share).
#include <korch/action_routine.hpp>
#include <korch/block.hpp>
#include <korch/bundle.hpp>
#include <korch/communicator.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/decomposition.hpp>
#include <korch/error.hpp>
#include <korch/guard_cell_exchange.hpp>
#include <korch/grid_residency.hpp>
#include <korch/guard_cell_iterator.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

using namespace korch;

namespace {

// A distinct value per global cell and variable.
double value_at(const std::array<int, 3>& cell, int var) {
  return 1.0 + cell[0] + 1000.0 * cell[1] + 1.0e6 * cell[2] + 0.25 * var;
}

struct Case {
  std::array<int, 3> blocks;
  std::array<int, 3> cells;
  int guard, guard_dims;
  BoundaryKind boundary;
};

GridSpec spec_for(const Case& c, const Decomposition& d, int rank) {
  GridSpec s;
  s.blocks = c.blocks;
  s.block_cells = c.cells;
  s.guard = c.guard;
  s.guard_dims = c.guard_dims;
  s.n_vars = 4;
  s.owned_blocks = d.blocks_of(rank);
  return s;
}

// Interior cells get value_at(global cell), guard cells NaN.
void paint(Grid& g) {
  const auto gw = g.guard_width();
  const auto& nb = g.spec().block_cells;
  auto data = g.data();
  for (const auto& m : g.blocks())
    for (int v = 0; v < g.n_vars(); ++v)
      for (int i = 0; i < static_cast<int>(data.extent(2)); ++i)
        for (int j = 0; j < static_cast<int>(data.extent(3)); ++j)
          for (int k = 0; k < static_cast<int>(data.extent(4)); ++k) {
            const bool interior = m.interior.lo[0] <= i && i < m.interior.hi[0] && m.interior.lo[1] <= j &&
                                  j < m.interior.hi[1] && m.interior.lo[2] <= k && k < m.interior.hi[2];
            const int l[3] = {i, j, k};
            std::array<int, 3> cell{};
            for (int d = 0; d < 3; ++d)
              cell[static_cast<std::size_t>(d)] =
                  m.index[static_cast<std::size_t>(d)] * nb[static_cast<std::size_t>(d)] + l[d] -
                  gw[static_cast<std::size_t>(d)];
            data(m.id, v, i, j, k) = interior ? value_at(cell, v) : std::numeric_limits<double>::quiet_NaN();
          }
}

// The value a guard cell of variable v must hold after a fill; counts mismatches of block `only`
// (or all blocks when -1).
int wrong_guard_cells(const Grid& g, const Case& c, int first, int count, int only = -1) {
  const auto gw = g.guard_width();
  const auto& nb = g.spec().block_cells;
  int wrong = 0;
  for (const auto& m : g.blocks()) {
    if (only >= 0 && m.id != only) continue;
    // Unmanaged: action routines call this on team threads (see Grid::data()).
    const auto data = g.block_data(m.id);
    for (int v = 0; v < g.n_vars(); ++v)
      for (int i = 0; i < static_cast<int>(data.extent(1)); ++i)
        for (int j = 0; j < static_cast<int>(data.extent(2)); ++j)
          for (int k = 0; k < static_cast<int>(data.extent(3)); ++k) {
            const int l[3] = {i, j, k};
            std::array<int, 3> cell{};
            bool interior = true;
            for (int d = 0; d < 3; ++d) {
              const auto D = static_cast<std::size_t>(d);
              int x = m.index[D] * nb[D] + l[d] - gw[D];
              if (gw[D] > 0) {
                interior = interior && l[d] >= gw[D] && l[d] < gw[D] + nb[D];
                const int n = nb[D] * c.blocks[D];
                x = c.boundary == BoundaryKind::periodic ? ((x % n) + n) % n : std::clamp(x, 0, n - 1);
              }
              cell[D] = x;
            }
            if (interior) continue;
            const double got = data(v, i, j, k);
            const bool filled = v >= first && v < first + count;
            if (filled ? got != value_at(cell, v) : !std::isnan(got)) ++wrong;
          }
  }
  return wrong;
}

// This rank's share of a case: the decomposition, the grid of its blocks and their exchange.
struct Share {
  Share(const Case& c, const Communicator& world)
      : decomposition(c.blocks, world.size()),
        grid(spec_for(c, decomposition, world.rank())),
        exchange(grid, decomposition, {c.boundary, c.boundary, c.boundary}, world) {}
  Decomposition decomposition;
  Grid grid;
  GuardCellExchange exchange;
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {{4, 3, 1}, {4, 4, 1}, 2, 2, BoundaryKind::periodic}, {{4, 3, 1}, {4, 4, 1}, 2, 2, BoundaryKind::outflow},
      {{3, 2, 2}, {3, 3, 3}, 1, 3, BoundaryKind::periodic}, {{3, 2, 2}, {2, 2, 2}, 2, 3, BoundaryKind::outflow},
      {{2, 2, 2}, {2, 3, 4}, 2, 3, BoundaryKind::periodic},
  };
  return all;
}

}  // namespace

TEST_CASE("Decomposition: every block has one owner; ranks hold contiguous, balanced runs of the Morton curve") {
  for (const auto& blocks : {std::array<int, 3>{6, 6, 1}, std::array<int, 3>{5, 3, 1}, std::array<int, 3>{4, 3, 5}}) {
    const int n = blocks[0] * blocks[1] * blocks[2];
    for (int ranks = 1; ranks <= std::min(n, 7); ++ranks) {
      Decomposition d(blocks, ranks);
      std::vector<int> curve(static_cast<std::size_t>(n));
      for (int g = 0; g < n; ++g) curve[static_cast<std::size_t>(g)] = g;
      std::sort(curve.begin(), curve.end(), [&](int a, int b) {
        return Decomposition::morton_key(d.index_of(a)) < Decomposition::morton_key(d.index_of(b));
      });
      std::size_t smallest = static_cast<std::size_t>(n), largest = 0;
      int seen = 0;
      for (int r = 0; r < ranks; ++r) {
        const auto& mine = d.blocks_of(r);
        smallest = std::min(smallest, mine.size());
        largest = std::max(largest, mine.size());
        CHECK(std::is_sorted(mine.begin(), mine.end()));
        for (const int g : mine) CHECK(d.owner(g) == r);
        seen += static_cast<int>(mine.size());
      }
      CHECK(seen == n);
      CHECK(largest - smallest <= 1);
      // Along the curve, the owner never decreases: each rank's blocks are one run.
      for (std::size_t p = 1; p < curve.size(); ++p) CHECK(d.owner(curve[p - 1]) <= d.owner(curve[p]));
    }
  }
  CHECK_THROWS_WITH_AS(Decomposition({2, 2, 1}, 5), doctest::Contains("5 ranks for 4 blocks"), Error);
  CHECK_THROWS_WITH_AS(Decomposition({2, 2, 1}, 0), doctest::Contains("0 ranks"), Error);
  CHECK_THROWS_WITH_AS(Decomposition({2, 2, 1}, 1).owner(4), doctest::Contains("block 4 does not exist"), Error);
}

TEST_CASE("GuardCellExchange: every guard cell holds its wrapped or clamped source, 2-D and 3-D, across ranks") {
  const Communicator world = Communicator::world();
  for (const auto& c : cases()) {
    if (world.size() > c.blocks[0] * c.blocks[1] * c.blocks[2]) continue;
    Share share(c, world);
    Grid& g = share.grid;
    GuardCellExchange& exchange = share.exchange;
    paint(g);
    exchange.fill(1, 2);  // variables 1 and 2; 0 and 3 keep NaN guard cells
    INFO("blocks " << c.blocks[0] << "x" << c.blocks[1] << "x" << c.blocks[2] << " guard " << c.guard << " rank "
                   << world.rank() << " of " << world.size());
    CHECK(wrong_guard_cells(g, c, 1, 2) == 0);
    CHECK_FALSE(exchange.in_progress());
    if (world.size() == 1) {
      CHECK(exchange.counts().neighbour_ranks == 0);
      CHECK(exchange.blocks_without_messages().size() == static_cast<std::size_t>(g.n_blocks()));
    }
  }
}

TEST_CASE("GuardCellExchange: a resident grid fills blocks on either side, moving guard cells and never whole blocks") {
  const Communicator world = Communicator::world();
  for (const auto& c : cases()) {
    if (world.size() > c.blocks[0] * c.blocks[1] * c.blocks[2]) continue;
    const Decomposition decomposition(c.blocks, world.size());
    GridSpec spec = spec_for(c, decomposition, world.rank());
    spec.resident = true;
    for (const int pattern : {0, 1, 2}) {  // blocks on the device: none, every other one, all
      Grid g(spec);
      GuardCellExchange exchange(g, decomposition, {c.boundary, c.boundary, c.boundary}, world);
      paint(g);
      GridResidency& r = *g.residency();
      std::vector<int> on_device;
      for (const auto& m : g.blocks())
        if (pattern == 2 || (pattern == 1 && m.global_id % 2 == 0)) on_device.push_back(m.id);
      // As after a device action that wrote variables 1 and 2 of those blocks.
      r.begin_device_use(on_device, {1, 2}, {1, 2}, DeviceTaskSpace());
      r.end_device_use(on_device, {1, 2}, {1, 2});
      const TransferBytes before = g.residency_transfers();
      exchange.fill(1, 2);
      INFO("blocks " << c.blocks[0] << "x" << c.blocks[1] << "x" << c.blocks[2] << " pattern " << pattern << " rank "
                     << world.rank() << " of " << world.size());
      // Each block stayed where it was, and only guard-cell sources crossed.
      CHECK(g.residency_transfers().total() == before.total());
      for (const int b : on_device) CHECK_FALSE(r.host_valid(b, 1));
      // Each staged cell is a local copy between sides, a cell sent, or a guard cell received.
      const auto& n = exchange.counts();
      const std::uint64_t guard_cells =
          (r.doubles_per_var() - static_cast<std::uint64_t>(c.cells[0] * c.cells[1] * c.cells[2])) *
          static_cast<std::uint64_t>(g.n_blocks());
      CHECK(exchange.device_transfers().total() <= (n.local_copies + n.cells_sent + guard_cells) * 2 * sizeof(double));
      if (pattern == 0) CHECK(exchange.device_transfers().total() == 0);
      if (pattern == 2 && world.size() == 1) CHECK(exchange.device_transfers().total() == 0);
      CHECK(wrong_guard_cells(g, c, 1, 2) == 0);  // block_data brings each block back
    }
  }
}

TEST_CASE("GuardCellExchange: misuse is an error naming the call") {
  const Communicator world = Communicator::world();
  const Case c = cases()[0];
  Decomposition d(c.blocks, world.size());
  Grid g(spec_for(c, d, world.rank()));
  GuardCellExchange exchange(g, d, {c.boundary, c.boundary, c.boundary}, world);
  CHECK_THROWS_WITH_AS(exchange.fill_local(0), doctest::Contains("call start() first"), Error);
  CHECK_THROWS_WITH_AS(exchange.start(3, 2), doctest::Contains("variables [3, 5)"), Error);
  exchange.start(0, 1);
  CHECK_THROWS_WITH_AS(exchange.start(0, 1), doctest::Contains("in progress"), Error);
  for (int b = 0; b < g.n_blocks(); ++b) exchange.fill_local(b);
  while (exchange.messages_outstanding() > 0) exchange.wait_some();
  exchange.finish();
  // A grid that does not hold the rank's share.
  GridSpec whole = spec_for(c, d, world.rank());
  whole.owned_blocks = {0};
  Grid wrong(whole);
  if (world.size() == 1 || d.blocks_of(world.rank()) != std::vector<int>{0})
    CHECK_THROWS_WITH_AS(GuardCellExchange(wrong, d, {c.boundary, c.boundary, c.boundary}, world),
                         doctest::Contains("owned_blocks"), Error);
}

TEST_CASE("GuardCellIterator: a routine never sees a block before its guard cells are valid") {
  const Communicator world = Communicator::world();
  Runtime runtime(RuntimeOptions{2, 2, 2, 1});
  for (const auto& c : cases()) {
    if (world.size() > c.blocks[0] * c.blocks[1] * c.blocks[2]) continue;
    Share share(c, world);
    Grid& g = share.grid;
    GuardCellExchange& exchange = share.exchange;
    GuardCellIterator order(exchange, 0, 4);
    for (int cycle = 0; cycle < 3; ++cycle) {
      paint(g);
      std::atomic<int> wrong{0}, seen{0};
      Bundle bundle("check guards");
      bundle.add(ActionRoutine("check", [&](const ActionContext&, DataItem& item) {
        auto& b = dynamic_cast<Block&>(item);
        wrong += wrong_guard_cells(g, c, 0, 4, b.block_id());
        ++seen;
      }));
      Configuration conf = configurations::get("cpu_only");
      for (auto& t : conf.teams) {
        t.type = DataType::block;
        t.action = "check";
      }
      runtime.execute(bundle, conf, g, &order);
      CHECK(wrong == 0);
      CHECK(seen == g.n_blocks());
      CHECK_FALSE(exchange.in_progress());
    }
  }
}

namespace {
// Hands out block 0 twice, or stops early.
class BadOrder : public BlockIterator {
 public:
  explicit BadOrder(bool twice) : twice_(twice) {}
  void begin(const DataSource&) override { given_ = 0; }
  std::optional<int> next() override {
    if (given_ == 2) return std::nullopt;
    ++given_;
    return twice_ ? 0 : given_ - 1;
  }
  void abandon() noexcept override { abandoned_ = true; }
  bool abandoned_ = false;

 private:
  bool twice_;
  int given_ = 0;
};
}  // namespace

TEST_CASE("Runtime: a block order that repeats or skips a block fails the cycle naming it, and the next cycle runs") {
  GridSpec s;
  s.blocks = {2, 2, 1};
  s.block_cells = {4, 4, 1};
  Grid g(s);
  Runtime runtime(RuntimeOptions{2, 2, 2, 1});
  std::atomic<int> seen{0};
  Bundle bundle("count");
  bundle.add(ActionRoutine("count", [&](const ActionContext&, DataItem&) { ++seen; }));
  Configuration conf = configurations::get("cpu_only");
  conf.teams[0].action = "count";
  BadOrder twice(true);
  CHECK_THROWS_WITH_AS(runtime.execute(bundle, conf, g, &twice), doctest::Contains("gave block 0 twice"), Error);
  CHECK(twice.abandoned_);
  BadOrder short_order(false);
  CHECK_THROWS_WITH_AS(runtime.execute(bundle, conf, g, &short_order),
                       doctest::Contains("ended after 2 of the grid's 4 blocks"), Error);
  seen = 0;
  runtime.execute(bundle, conf, g);
  CHECK(seen == g.n_blocks() * g.tiles_per_block());
}
