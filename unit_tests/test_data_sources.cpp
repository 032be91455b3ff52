// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Data sources: a physics code's own blocks (BlockList) of several sizes, guard widths, layouts and
// levels, driven through every built-in configuration and the block iterators, against a plain loop
// over the code's arrays.
#include "test_runtime_support.hpp"

#include <korch/block_iterators.hpp>
#include <korch/block_list.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/error.hpp>
#include <korch/runtime.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <set>

using namespace korch;
using namespace korch::test;

namespace {

constexpr int n_vars = 3;

// The code's mesh: each block an array of its own, in the code's layout.
struct CodeMesh {
  struct Part {
    BlockShape shape;
    std::vector<double> storage;  // the code's array (with padding where the layout has it)
    BlockArray array;
  };
  std::vector<std::unique_ptr<Part>> parts;

  static std::unique_ptr<Part> part(std::array<int, 3> cells, std::array<int, 3> guard, std::array<int, 3> tile,
                                    int level, bool leaf) {
    auto p = std::make_unique<Part>();
    p->shape.cells = cells;
    p->shape.guard = guard;
    p->shape.tile_cells = tile;
    p->shape.level = level;
    p->shape.leaf = leaf;
    return p;
  }
  // A Fortran-ordered block u(i, j, k, var), with `pad` unused doubles after every row along i.
  void add_fortran(std::array<int, 3> cells, std::array<int, 3> guard, std::array<int, 3> tile, int level, bool leaf,
                   int pad) {
    auto p = part(cells, guard, tile, level, leaf);
    std::array<std::ptrdiff_t, 3> e{};
    for (int d = 0; d < 3; ++d) e[d] = cells[d] + 2 * guard[d];
    const std::ptrdiff_t row = e[0] + pad;
    p->storage.assign(static_cast<std::size_t>(row * e[1] * e[2] * n_vars), -7.0);
    p->array = BlockArray::of(p->storage.data(), IndexOrder::i_j_k_var, {e[0], e[1], e[2], n_vars},
                              {1, row, row * e[1], row * e[1] * e[2]});
    parts.push_back(std::move(p));
  }
  // A block in korch::Grid's order (var, i, j, k), from a Kokkos View the code owns.
  void add_view(std::array<int, 3> cells, std::array<int, 3> guard, std::array<int, 3> tile, int level, bool leaf) {
    auto p = part(cells, guard, tile, level, leaf);
    const auto e = [&](int d) { return static_cast<std::size_t>(cells[d] + 2 * guard[d]); };
    p->storage.assign(n_vars * e(0) * e(1) * e(2), -7.0);
    Kokkos::View<double****, Kokkos::LayoutRight, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> v(
        p->storage.data(), n_vars, e(0), e(1), e(2));
    p->array = BlockArray::of(v, IndexOrder::var_i_j_k);
    parts.push_back(std::move(p));
  }
  BlockList list() const {
    BlockList l("test mesh", n_vars);
    for (const auto& p : parts) l.add(p->shape, p->array);
    return l;
  }
  double& at(std::size_t b, int v, int i, int j, int k) {
    const auto& s = parts[b]->array.stride;
    return parts[b]->array.data[v * s[0] + i * s[1] + j * s[2] + k * s[3]];
  }
  // Every stored cell of every block, guard cells included (padding keeps its -7).
  template <class F>
  void each_cell(bool interior_only, F&& f) {
    for (std::size_t b = 0; b < parts.size(); ++b) {
      const auto& sh = parts[b]->shape;
      int lo[3], hi[3];
      for (int d = 0; d < 3; ++d) {
        lo[d] = interior_only ? sh.guard[d] : 0;
        hi[d] = interior_only ? sh.guard[d] + sh.cells[d] : sh.cells[d] + 2 * sh.guard[d];
      }
      for (int v = 0; v < n_vars; ++v)
        for (int i = lo[0]; i < hi[0]; ++i)
          for (int j = lo[1]; j < hi[1]; ++j)
            for (int k = lo[2]; k < hi[2]; ++k) f(b, v, i, j, k);
    }
  }
  void fill() {
    each_cell(false, [&](std::size_t b, int v, int i, int j, int k) {
      at(b, v, i, j, k) = 0.25 * static_cast<double>(b) + 0.5 * v + 0.01 * i + 0.02 * j + 0.03 * k;
    });
  }
  // The plain loop: each action on every interior cell of the blocks `chosen` accepts.
  template <class Chosen>
  void reference(const std::vector<Affine>& actions, Chosen&& chosen) {
    for (const auto& f : actions)
      each_cell(true, [&](std::size_t b, int v, int i, int j, int k) {
        if (v == f.out && chosen(b)) at(b, v, i, j, k) = f.a * at(b, f.in, i, j, k) + f.b * at(b, v, i, j, k) + f.c;
      });
  }
  double max_difference(CodeMesh& other) {
    double diff = 0;
    for (std::size_t b = 0; b < parts.size(); ++b)
      for (std::size_t n = 0; n < parts[b]->storage.size(); ++n)
        diff = std::max(diff, std::abs(parts[b]->storage[n] - other.parts[b]->storage[n]));
    return diff;
  }
};

// Blocks of several sizes and guard widths, two layouts, two levels (the coarse ones not leaves).
void build(CodeMesh& m) {
  m.add_fortran({8, 4, 2}, {1, 1, 1}, {4, 4, 0}, 0, false, 0);
  m.add_view({5, 7, 3}, {2, 1, 0}, {2, 3, 0}, 0, true);
  m.add_fortran({16, 2, 1}, {2, 2, 0}, {0, 0, 0}, 1, true, 3);
  m.add_view({3, 3, 3}, {0, 0, 0}, {2, 2, 2}, 1, true);
  m.add_fortran({6, 6, 1}, {1, 1, 0}, {3, 6, 0}, 0, false, 1);
}

const Affine A{"A", 0, 0, 2.0, 0.0, 1.0};
const Affine B_indep{"B", 1, 1, 3.0, 0.0, -1.0};
const Affine B_dep{"B", 1, 0, 1.0, 1.0, 0.0};
const Affine C_indep{"C", 2, 2, 0.5, 0.0, 2.0};
const Affine C_dep{"C", 2, 1, 1.0, 1.0, 0.0};

// The bundle of each built-in (the actions its pipelines need, in an order valid for the plain
// loop); an action on action metadata changes no cell.
std::vector<Affine> actions_of(const std::string& name) {
  if (name == "cpu_only" || name == "gpu_only" || name == "cpu_gpu_data_parallel" || name == "gpu_internal") return {A};
  if (name == "cpu_gpu_action_parallel" || name == "hybrid_distributor") return {A, B_indep};
  if (name == "data_parallel_accumulator") return {A, B_dep};
  if (name == "mashup") return {A, B_dep, C_indep};
  if (name == "concurrent_itor") return {A, B_indep, C_dep};
  if (name == "split_itor") return {A, B_dep};
  if (name == "big_example") return {A, B_dep, C_dep};
  FAIL("no bundle for the built-in configuration '" << name << "': add it to actions_of");
  return {};
}

Bundle bundle_of(const std::vector<Affine>& actions, ActionLog* log) {
  Bundle b("data source test");
  for (const auto& a : actions) b.add(affine_routine(a, log));
  return b;
}

}  // namespace

TEST_CASE(
    "Data sources: every built-in configuration over a code's own blocks of several sizes equals the plain loop") {
  Runtime rt;
  for (const auto& name : configurations::names()) {
    CAPTURE(name);
    CodeMesh mesh, expected;
    build(mesh);
    build(expected);
    mesh.fill();
    expected.fill();
    const auto actions = actions_of(name);
    if (name != "gpu_internal") expected.reference(actions, [](std::size_t) { return true; });
    auto list = mesh.list();
    ActionLog log;
    rt.execute(bundle_of(actions, &log), configurations::get(name), list);
    // Bitwise: the same per-cell arithmetic in the same order, with no contraction (docs/floating-point.md).
    CHECK(mesh.max_difference(expected) == 0.0);
    // Every block's every tile once per action (or the whole block once).
    std::map<std::pair<int, std::string>, std::multiset<int>> seen;
    for (const auto& e : log.entries()) seen[{e.block, e.action}].insert(e.tile);
    for (int b = 0; b < list.n_blocks(); ++b)
      for (const auto& a : actions) {
        CAPTURE(b);
        CAPTURE(a.name);
        const auto& tiles = seen[{b, a.name}];
        if (tiles.size() == 1 && *tiles.begin() == -1) continue;
        CHECK(tiles.size() == list.tiles_of(b).size());
        for (int t = 0; t < static_cast<int>(list.tiles_of(b).size()); ++t) CHECK(tiles.count(t) == 1);
      }
    CHECK(rt.pinned_pool().outstanding_bytes() == 0);
    CHECK(rt.device_pool().outstanding_bytes() == 0);
  }
}

TEST_CASE("Data sources: the leaf and level iterators update only their blocks; all blocks updates every one") {
  Runtime rt;
  CodeMesh probe;
  build(probe);
  const auto list_of_probe = probe.list();
  std::set<int> leaves, level1;
  for (int b = 0; b < list_of_probe.n_blocks(); ++b) {
    if (list_of_probe.is_leaf(b)) leaves.insert(b);
    if (list_of_probe.block(b).level == 1) level1.insert(b);
  }
  REQUIRE(leaves.size() == 3);
  REQUIRE(level1.size() == 2);
  CHECK(list_of_probe.levels() == std::vector<int>{0, 1});
  for (const char* name : {"cpu_only", "gpu_only", "concurrent_itor"}) {
    CAPTURE(name);
    const auto actions = actions_of(name);
    auto run = [&](BlockIterator& order, const std::set<int>& chosen) {
      CodeMesh mesh, expected;
      build(mesh);
      build(expected);
      mesh.fill();
      expected.fill();
      expected.reference(actions, [&](std::size_t b) { return chosen.count(static_cast<int>(b)) == 1; });
      auto list = mesh.list();
      rt.execute(bundle_of(actions, nullptr), configurations::get(name), list, &order);
      CHECK(mesh.max_difference(expected) == 0.0);
    };
    LeafBlocks leaf_order;
    run(leaf_order, leaves);
    LevelBlocks level_order(1);
    run(level_order, level1);
    AllBlocks all;
    run(all, {0, 1, 2, 3, 4});
  }
}

TEST_CASE("Data sources: a bad block is refused naming the list, the block and the field") {
  BlockList list("heat", 1);
  double cell = 0;
  BlockShape shape;
  const BlockArray array = BlockArray::of(&cell, IndexOrder::var_i_j_k, {1, 1, 1, 1}, {1, 1, 1, 1});
  CHECK(list.add(shape, array) == 0);
  shape.cells = {4, 0, 1};
  CHECK_THROWS_WITH_AS(list.add(shape, array), doctest::Contains("block list 'heat': block 1 has 0 cells in y"), Error);
  shape.cells = {1, 1, 1};
  shape.guard = {0, -1, 0};
  CHECK_THROWS_WITH_AS(list.add(shape, array), doctest::Contains("-1 guard cells in y"), Error);
  shape.guard = {0, 0, 0};
  CHECK_THROWS_WITH_AS(list.add(shape, BlockArray::of(nullptr, IndexOrder::var_i_j_k, {1, 1, 1, 1}, {1, 1, 1, 1})),
                       doctest::Contains("has no data"), Error);
  CHECK_THROWS_WITH_AS(list.add(shape, BlockArray::of(&cell, IndexOrder::var_i_j_k, {1, 1, 1, 1}, {1, 0, 1, 1})),
                       doctest::Contains("stride 0 along i"), Error);
  CHECK_THROWS_WITH_AS(list.add(shape, BlockArray{&cell, {1, 1, 1, 1}}), doctest::Contains("gives no extents"), Error);
  CHECK_THROWS_WITH_AS(list.block(5), doctest::Contains("block list 'heat': block 5 does not exist"), Error);
  CHECK_THROWS_WITH_AS(BlockList("empty", 0), doctest::Contains("n_vars is 0"), Error);
  // An item of a block list is not a Grid: grid() says what to use instead.
  Tile tile(list, 0, 0);
  CHECK_THROWS_WITH_AS((void)tile.grid(), doctest::Contains("use the item's source() and view()"), Error);
  CHECK(tile.view().data() == &cell);
}

TEST_CASE("Data sources: a grid is a data source whose view is its LayoutRight block storage") {
  GridSpec s;
  s.block_cells = {4, 3, 2};
  s.blocks = {2, 1, 1};
  s.n_vars = 2;
  s.tile_cells = {2, 0, 0};
  Grid grid(s);
  const DataSource& source = grid;
  CHECK(source.source_name() == "grid");
  CHECK(source.tiles_of(1).size() == 2);
  const auto view = source.block_view(1);
  const auto data = grid.block_data(1);
  CHECK(view.data() == data.data());
  for (int r = 0; r < 4; ++r) {
    CHECK(view.extent(r) == data.extent(r));
    CHECK(view.stride(r) == data.stride(r));
  }
  CHECK(&as_grid(source) == &grid);
  // A copy is another source: caches of the original's items do not serve it.
  Grid copy = grid.clone();
  CHECK(copy.layout_stamp() != grid.layout_stamp());
}

TEST_CASE("Data sources: a block list re-listed between cycles runs its new blocks and never a stale item") {
  Runtime rt;
  for (const std::string name : {"cpu_only", "gpu_only", "cpu_gpu_data_parallel", "cpu_gpu_action_parallel"}) {
    CAPTURE(name);
    const auto actions = actions_of(name);
    // The same list object throughout, as a code that regrids re-lists its blocks: the runtime's
    // cached items and packet layouts for it must follow.
    BlockList list("regridded mesh", n_vars);
    CodeMesh before, after, untouched, expected;
    build(before);
    for (CodeMesh* m : {&after, &expected}) {  // another block set: other sizes, count and arrays
      m->add_view({4, 6, 1}, {1, 1, 0}, {2, 0, 0}, 0, true);
      m->add_fortran({7, 3, 2}, {2, 1, 1}, {0, 0, 0}, 1, true, 2);
      m->add_view({2, 2, 2}, {1, 1, 1}, {0, 0, 0}, 2, true);
    }
    before.fill();
    after.fill();
    expected.fill();
    for (const auto& p : before.parts) list.add(p->shape, p->array);
    rt.execute(bundle_of(actions, nullptr), configurations::get(name), list);
    build(untouched);
    for (std::size_t b = 0; b < before.parts.size(); ++b) untouched.parts[b]->storage = before.parts[b]->storage;
    list.clear();
    for (const auto& p : after.parts) list.add(p->shape, p->array);
    for (int cycle = 0; cycle < 2; ++cycle) {
      rt.execute(bundle_of(actions, nullptr), configurations::get(name), list);
      expected.reference(actions, [](std::size_t) { return true; });
    }
    CHECK(after.max_difference(expected) == 0.0);
    CHECK(before.max_difference(untouched) == 0.0);  // the old blocks' arrays saw nothing more
  }
}
