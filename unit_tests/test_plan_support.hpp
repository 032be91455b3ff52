// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Shared by the planner suites: a small 2-D grid, its periodic guard-cell fill, and action bodies
// computed from declarations (every written variable becomes a bounded function of everything the
// action reads, stencil neighbours included), so that any wrong order of actions changes results.
#pragma once

#include <korch/block_iterator.hpp>
#include <korch/grid.hpp>
#include <korch/plan/executor.hpp>
#include <korch/plan/operation.hpp>
#include <korch/plan/scheduler.hpp>
#include <korch/runtime.hpp>

#include <atomic>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace korch::test {

// The runtime the plan suites run on, and a scheduler planning for its shape.
inline const RuntimeOptions runtime_options{6, 2, 6, 1, {}, 0, 0};

inline plan::SchedulerOptions scheduler_options() {
  plan::SchedulerOptions o;
  o.shape = RuntimeShape{6, 2, 6, 1};
  return o;
}

inline GridSpec plan_grid_spec(int n_vars) {
  GridSpec s;
  s.block_cells = {8, 8, 1};
  s.blocks = {4, 2, 1};
  s.guard = 2;
  s.guard_dims = 2;
  s.n_vars = n_vars;
  s.tile_cells = {4, 4, 1};
  return s;
}

// Every guard cell of `variables` takes the value of its periodic source cell.
inline void fill_periodic(Grid& grid, const std::vector<int>& variables) {
  const GridSpec& s = grid.spec();
  auto d = grid.data();
  for (int b = 0; b < grid.n_blocks(); ++b) {
    const BlockMeta& m = grid.block(b);
    for (int v : variables)
      for (int i = m.stored.lo[0]; i < m.stored.hi[0]; ++i)
        for (int j = m.stored.lo[1]; j < m.stored.hi[1]; ++j) {
          const bool interior =
              i >= m.interior.lo[0] && i < m.interior.hi[0] && j >= m.interior.lo[1] && j < m.interior.hi[1];
          if (interior) continue;
          std::array<int, 2> src_block{}, src_cell{};
          const std::array<int, 2> cell{i, j};
          for (int dim = 0; dim < 2; ++dim) {
            const int n = s.block_cells[static_cast<std::size_t>(dim)];
            const int total = n * s.blocks[static_cast<std::size_t>(dim)];
            const int global =
                ((m.index[static_cast<std::size_t>(dim)] * n + cell[static_cast<std::size_t>(dim)] - s.guard) % total +
                 total) %
                total;
            src_block[static_cast<std::size_t>(dim)] = global / n;
            src_cell[static_cast<std::size_t>(dim)] = global % n + s.guard;
          }
          const int sb = src_block[0] + s.blocks[0] * src_block[1];
          d(b, v, i, j, 0) = d(sb, v, src_cell[0], src_cell[1], 0);
        }
  }
}

inline void paint(Grid& grid) {
  grid.fill(
      [](int b, int v, int i, int j, int k) { return 0.01 * (b + 1) + 0.1 * v + 0.003 * i + 0.007 * j + 0.0 * k; });
}

// The body of a declared action: each written variable becomes a bounded function of the values
// read (each read variable at the cell and, for a stencil g, its 4g neighbours in x and y).
inline plan::ActionBody body_of(const ActionDeclaration& a, const plan::Operation& operation, int salt) {
  std::vector<std::pair<int, int>> reads;
  for (const auto& r : a.reads) reads.emplace_back(operation.variable_index(r.variable), r.stencil);
  std::vector<int> writes;
  for (const auto& w : a.writes) writes.push_back(operation.variable_index(w));
  // Runs on team threads: the block's unmanaged view, not a copy of the grid's managed View, whose
  // reference count a Serial-only Kokkos changes without atomics (grid.hpp, Grid::data). Any
  // source: a Grid or a code's own blocks.
  return [reads, writes, salt](DataSource& source, int b, const Box& box) {
    const BlockView d = source.block_view(b);
    for (int i = box.lo[0]; i < box.hi[0]; ++i)
      for (int j = box.lo[1]; j < box.hi[1]; ++j)
        for (int k = box.lo[2]; k < box.hi[2]; ++k) {
          double acc = 0.001 * salt;
          for (const auto& [v, g] : reads) {
            acc += 0.7 * d(v, i, j, k) + 0.013 * v;
            for (int s = 1; s <= g; ++s)
              acc +=
                  0.05 * (d(v, i - s, j, k) + d(v, i + s, j, k) + 0.5 * d(v, i, j - s, k) + 0.25 * d(v, i, j + s, k));
          }
          for (std::size_t w = 0; w < writes.size(); ++w)
            d(writes[w], i, j, k) = acc / (1.0 + std::fabs(acc)) + 0.01 * static_cast<double>(w + 1);
        }
  };
}

inline plan::ActionBodies bodies_of(const plan::Operation& operation) {
  plan::ActionBodies out;
  int salt = 1;
  for (const ActionDeclaration* a : operation.actions()) out[a->action] = body_of(*a, operation, salt++);
  return out;
}

// Interior cells that differ (bitwise) between two grids of the same spec.
inline int differing_cells(const Grid& x, const Grid& y) {
  int n = 0;
  auto a = x.data();
  auto b = y.data();
  for (int blk = 0; blk < x.n_blocks(); ++blk) {
    const Box& in = x.block(blk).interior;
    for (int v = 0; v < x.n_vars(); ++v)
      for (int i = in.lo[0]; i < in.hi[0]; ++i)
        for (int j = in.lo[1]; j < in.hi[1]; ++j)
          for (int k = in.lo[2]; k < in.hi[2]; ++k) n += a(blk, v, i, j, k) != b(blk, v, i, j, k) ? 1 : 0;
  }
  return n;
}

// Bodies for actions named 'A', 'B', … that stamp every cell they touch with a clock shared by all
// teams: a cell stamped twice by one action is a repeat, a missing stamp an action that never ran
// there, and the stamps of two actions on one cell give their order. Plan grids only (8 x 8 cells,
// 2 guard cells).
class CellStamps {
 public:
  CellStamps(const Grid& grid, int n_actions)
      : blocks_(grid.n_blocks()), stamp_(static_cast<std::size_t>(n_actions * grid.n_blocks() * cells)) {
    for (auto& s : stamp_) s = 0;
  }
  static constexpr int cells = 64;

  plan::ActionBodies bodies(int n_actions) {
    plan::ActionBodies out;
    for (int a = 0; a < n_actions; ++a) {
      out[std::string(1, static_cast<char>('A' + a))] = [this, a](DataSource&, int b, const Box& box) {
        const long now = ++clock_;
        for (int i = box.lo[0]; i < box.hi[0]; ++i)
          for (int j = box.lo[1]; j < box.hi[1]; ++j)
            if (slot(a, b, (i - 2) + 8 * (j - 2)).exchange(now) != 0) ++repeats_;
      };
    }
    return out;
  }
  long at(int action, int block, int cell) { return slot(action, block, cell).load(); }
  int repeats() const { return repeats_.load(); }
  // Cells of some block that some action never stamped.
  int missing() {
    int n = 0;
    for (const auto& s : stamp_) n += s.load() == 0 ? 1 : 0;
    return n;
  }

 private:
  std::atomic<long>& slot(int action, int block, int cell) {
    return stamp_[static_cast<std::size_t>((action * blocks_ + block) * cells + cell)];
  }
  int blocks_;
  std::vector<std::atomic<long>> stamp_;
  std::atomic<long> clock_{0};
  std::atomic<int> repeats_{0};
};

// The design's running example: A short, B heavy reading what A writes, C alone, E reading what D
// writes, F host only.
inline const char* const running_example = R"({"name": "running_example", "variables": ["a", "b", "c", "d", "e", "f"],
  "steps": [
    {"action": {"name": "A", "reads": ["f"], "writes": ["a"], "hints": {"short": true}}},
    {"action": {"name": "B", "reads": ["a"], "writes": ["b"], "hints": {"heavy": true}}},
    {"action": {"name": "C", "writes": ["c"]}},
    {"action": {"name": "D", "writes": ["d"]}},
    {"action": {"name": "E", "reads": ["d"], "writes": ["e"]}},
    {"action": {"name": "F", "reads": ["f"], "hints": {"host_only": true}}}]})";

// The running example's pipeline A -> B -> C with A host only, C device only and B neutral (a
// little dearer on the host, so its split is not even).
inline const char* const sided_example = R"({"name": "sided", "variables": ["a", "b", "c"],
  "steps": [
    {"action": {"name": "A", "writes": ["a"], "hints": {"host_only": true}}},
    {"action": {"name": "B", "reads": ["a"], "writes": ["b"], "hints": {"cost": {"host": 1.5, "device": 1}}}},
    {"action": {"name": "C", "reads": ["b"], "writes": ["c"], "hints": {"device_only": true}}}]})";

// Periodic guard fills, and reductions that log "name=sum of the variables' interiors".
inline plan::ExecutionHooks logging_hooks(std::vector<std::string>& log) {
  plan::ExecutionHooks h;
  h.fill_guards = [](DataSource& source, const std::vector<int>& vars) { fill_periodic(as_grid(source), vars); };
  h.reduce = [&log](DataSource& source, const std::string& name, const std::vector<int>& vars) {
    Grid& grid = as_grid(source);
    double sum = 0;
    auto d = grid.data();
    for (int b = 0; b < grid.n_blocks(); ++b) {
      const Box& in = grid.block(b).interior;
      for (int v : vars)
        for (int x = in.lo[0]; x < in.hi[0]; ++x)
          for (int y = in.lo[1]; y < in.hi[1]; ++y) sum += d(b, v, x, y, 0);
    }
    log.push_back(name + "=" + std::to_string(sum));
  };
  return h;
}

// A random operation of `n_actions` actions over 3..6 variables: random reads (some with stencils),
// writes, hints, data types and iterators, and now and then a barrier, some removable.
inline plan::Operation random_operation(std::mt19937& rng, int n_actions, int index) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  plan::Operation op;
  op.name = "random" + std::to_string(index);
  const int nv = 3 + pick(4);
  for (int v = 0; v < nv; ++v) op.variables.push_back("v" + std::to_string(v));
  op.parameters["p"] = pick(2);
  for (int a = 0; a < n_actions; ++a) {
    if (a > 0 && pick(7) == 0) {
      plan::Step s;
      s.is_action = false;
      s.barrier.kind = pick(2) ? plan::BarrierKind::guard_fill : plan::BarrierKind::reduction;
      s.barrier.name = "r" + std::to_string(a);
      s.barrier.variables.push_back(op.variables[static_cast<std::size_t>(pick(nv))]);
      if (pick(2)) s.barrier.unless = plan::Condition::parse(pick(2) ? "p == 1" : "!p", "unless");
      op.steps.push_back(s);
    }
    plan::Step s;
    ActionDeclaration& d = s.action;
    d.action = "X" + std::to_string(a);
    for (int v = 0; v < nv; ++v) {
      const int roll = pick(10);
      if (roll < 3)
        d.reads.push_back(VariableRead{op.variables[static_cast<std::size_t>(v)], roll == 0 ? 1 + pick(2) : 0});
    }
    for (int w = 0, n = 1 + pick(2); w < n; ++w) {
      const std::string& v = op.variables[static_cast<std::size_t>(pick(nv))];
      if (!d.writes_variable(v) && d.stencil_of(v) <= 0) d.writes.push_back(v);
    }
    const int hint = pick(8);
    d.hints.short_running = hint == 0;
    d.hints.heavy = hint == 1;
    d.hints.host_only = hint == 2;
    d.hints.device_only = hint == 3;
    if (hint == 4) {
      d.hints.host_cost = 0.5 + pick(4);
      d.hints.device_cost = 0.5 + pick(4);
    }
    d.data_type = static_cast<DeclaredDataType>(pick(3));
    const int iterator = pick(8);  // mostly leaves, so that bundles grow
    d.iterator = iterator == 0   ? ActionIterator{IteratorKind::all_blocks, 0}
                 : iterator == 1 ? ActionIterator{IteratorKind::level, 0}
                                 : ActionIterator{IteratorKind::leaves, 0};
    op.steps.push_back(s);
  }
  op.check();
  return op;
}

// A block order that fills guard cells when the cycle begins and hands the blocks out last first
// (a stand-in for GuardCellIterator, whose order depends on messages).
class FillingOrder : public BlockIterator {
 public:
  explicit FillingOrder(Grid& grid) : grid_(grid) {}
  void set_variables(const std::vector<int>& variables) { variables_ = variables; }
  void begin(const DataSource&) override {
    fill_periodic(grid_, variables_);
    next_ = grid_.n_blocks();
    ++cycles;
  }
  std::optional<int> next() override {
    if (next_ == 0) return std::nullopt;
    return --next_;
  }
  int cycles = 0;

 private:
  Grid& grid_;
  std::vector<int> variables_;
  int next_ = 0;
};

}  // namespace korch::test
