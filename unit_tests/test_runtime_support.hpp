// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the runtime suites: per-cell affine actions that run on any item type (tile, block,
// packet on the "device", action metadata), a log of (block, tile, action, sequence), reference
// results computed sequentially on the host, and the checks of the runtime's rules.
#pragma once

#include <korch/action_metadata.hpp>
#include <korch/block.hpp>
#include <korch/block_iterator.hpp>
#include <korch/bundle.hpp>
#include <korch/data_packet.hpp>
#include <korch/grid.hpp>
#include <korch/tile.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace korch::test {

// Every block once, in the order given.
class GivenOrder : public BlockIterator {
 public:
  explicit GivenOrder(std::vector<int> order) : order_(std::move(order)) {}
  void begin(const DataSource&) override { at_ = 0; }
  std::optional<int> next() override { return at_ < order_.size() ? std::optional<int>(order_[at_++]) : std::nullopt; }

 private:
  std::vector<int> order_;
  std::size_t at_ = 0;
};

// Four blocks of 8 x 8 x 4 cells (one guard cell, 3 variables, level 2) in tiles of `tile`.
inline GridSpec small_tiled_spec(std::array<int, 3> tile = {4, 4, 4}) {
  GridSpec s;
  s.block_cells = {8, 8, 4};
  s.blocks = {2, 2, 1};
  s.guard = 1;
  s.n_vars = 3;
  s.level = 2;
  s.tile_cells = tile;
  return s;
}

// v[out] = a * v[in] + b * v[out] + c on the interior of whatever item it gets.
struct Affine {
  std::string name;
  int out = 0, in = 0;
  double a = 1, b = 0, c = 0;
};

struct LogEntry {
  int block, tile;
  std::string action;
  std::uint64_t seq;
};

class ActionLog {
 public:
  void add(int block, int tile, const std::string& action) {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.push_back({block, tile, action, ++seq_});
  }
  std::vector<LogEntry> entries() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return entries_;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<LogEntry> entries_;
  std::uint64_t seq_ = 0;
};

template <class Space, class View>
void apply_box(const Space& space, View out, View in, int i0, int i1, int j0, int j1, int k0, int k1, double a,
               double b, double c) {
  using Policy = Kokkos::MDRangePolicy<Space, Kokkos::Rank<3>>;
  Kokkos::parallel_for(
      "korch test affine", Policy(space, {i0, j0, k0}, {i1, j1, k1}),
      KOKKOS_LAMBDA(int i, int j, int k) { out(i, j, k) = a * in(i, j, k) + b * out(i, j, k) + c; });
}

inline ActionRoutine affine_routine(const Affine f, ActionLog* log) {
  return ActionRoutine(f.name, [f, log](const ActionContext& ctx, DataItem& item) {
    if (auto* t = dynamic_cast<Tile*>(&item)) {
      auto d = t->view();  // any data source's layout
      auto out = Kokkos::subview(d, f.out, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
      auto in = Kokkos::subview(d, f.in, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
      const Box& bx = t->box();
      apply_box(ctx.host_space(), out, in, bx.lo[0], bx.hi[0], bx.lo[1], bx.hi[1], bx.lo[2], bx.hi[2], f.a, f.b, f.c);
      ctx.host_space().fence();
      if (log) log->add(t->block_id(), t->tile_index(), f.name);
    } else if (auto* bl = dynamic_cast<Block*>(&item)) {
      auto d = bl->view();
      auto out = Kokkos::subview(d, f.out, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
      auto in = Kokkos::subview(d, f.in, Kokkos::ALL, Kokkos::ALL, Kokkos::ALL);
      const Box& bx = bl->interior();
      apply_box(ctx.host_space(), out, in, bx.lo[0], bx.hi[0], bx.lo[1], bx.hi[1], bx.lo[2], bx.hi[2], f.a, f.b, f.c);
      ctx.host_space().fence();
      if (log) log->add(bl->block_id(), -1, f.name);
    } else if (auto* p = dynamic_cast<DataPacket*>(&item)) {
      for (std::size_t e = 0; e < p->size(); ++e) {
        const auto& m = p->entry(e);
        auto out = p->device_var(e, f.out);
        auto in = p->device_var(e, f.in);
        apply_box(ctx.device_space(), out, in, m.interior_lo[0] - m.lo[0], m.interior_hi[0] - m.lo[0],
                  m.interior_lo[1] - m.lo[1], m.interior_hi[1] - m.lo[1], m.interior_lo[2] - m.lo[2],
                  m.interior_hi[2] - m.lo[2], f.a, f.b, f.c);
      }
      ctx.device_space().fence();
      if (log)
        for (std::size_t e = 0; e < p->size(); ++e) log->add(p->entry(e).block, p->entry(e).tile, f.name);
    } else if (auto* m = dynamic_cast<ActionMetadata*>(&item)) {
      if (log) log->add(m->block_id(), -1, f.name);
    } else {
      throw Error("affine action: unknown item " + item.describe());
    }
  });
}

// The sequential reference: apply `actions` in order to every interior cell on the host.
inline void apply_reference(Grid& grid, const std::vector<Affine>& actions) {
  auto d = grid.data();
  for (const auto& f : actions)
    for (const auto& m : grid.blocks())
      for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
        for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
          for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k)
            d(m.id, f.out, i, j, k) = f.a * d(m.id, f.in, i, j, k) + f.b * d(m.id, f.out, i, j, k) + f.c;
}

inline void fill_pattern(Grid& grid) {
  grid.fill([](int b, int v, int i, int j, int k) { return 0.25 * b + 0.5 * v + 0.01 * i + 0.02 * j + 0.03 * k; });
}

// Every action of `actions` applied to every part of every block exactly once (either once to the
// whole block, or once to each of its tiles), and for each pair (before, after) all applications of
// `before` to a block precede all applications of `after` to it.
inline void check_log(const ActionLog& log, const Grid& grid, const std::vector<std::string>& actions,
                      const std::vector<std::pair<std::string, std::string>>& order) {
  std::map<std::pair<int, std::string>, std::vector<LogEntry>> by;
  for (const auto& e : log.entries()) by[{e.block, e.action}].push_back(e);
  for (int b = 0; b < grid.n_blocks(); ++b) {
    for (const auto& a : actions) {
      const auto& v = by[{b, a}];
      INFO("block " << b << " action " << a);
      REQUIRE(!v.empty());
      if (v.size() == 1 && v[0].tile == -1) continue;
      REQUIRE(v.size() == static_cast<std::size_t>(grid.tiles_per_block()));
      std::vector<int> tiles;
      for (const auto& e : v) tiles.push_back(e.tile);
      std::sort(tiles.begin(), tiles.end());
      for (int t = 0; t < grid.tiles_per_block(); ++t) CHECK(tiles[static_cast<std::size_t>(t)] == t);
    }
    for (const auto& pair : order) {
      const std::string first = pair.first, second = pair.second;  // not structured bindings: INFO captures them
      std::uint64_t last_first = 0, first_second = ~0ULL;
      for (const auto& e : by[{b, first}]) last_first = std::max(last_first, e.seq);
      for (const auto& e : by[{b, second}]) first_second = std::min(first_second, e.seq);
      INFO("block " << b << ": " << first << " before " << second);
      CHECK(last_first < first_second);
    }
  }
  for (const auto& e : log.entries()) {
    INFO("unexpected action " << e.action);
    CHECK(std::find(actions.begin(), actions.end(), e.action) != actions.end());
  }
}

}  // namespace korch::test
