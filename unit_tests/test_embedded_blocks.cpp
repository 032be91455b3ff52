// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A physics code's own blocks under typed actions: one box routine that reads two guard cells runs
// on blocks the code laid out three ways (a LayoutLeft View u(i, j, k, var), a LayoutRight View
// u(var, i, j, k), a raw array padded after every row), of two sizes, on every built-in
// configuration, with korch filling the guard cells from the code's neighbour lists on as many
// ranks as the suite runs on, and must equal the code's own loop bitwise. Mistakes in the shape are
// errors.
#include <korch/block.hpp>
#include <korch/block_list.hpp>
#include <korch/block_neighbours.hpp>
#include <korch/communicator.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/guard_cell_exchange.hpp>
#include <korch/guard_cell_iterator.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>

#include "test_error_support.hpp"

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_embedded_blocks {

using namespace korch;

namespace {

constexpr int guard = 2;
constexpr int ny = 12;                  // every block's height
const int widths[] = {16, 10, 16, 10};  // two block sizes along x, in a periodic row
constexpr int n_blocks = 4;

// Variables: 3 is the field the code gives (its guard cells filled), 0, 1 and 2 what the actions
// bound to slots A, B and C write (the built-ins' convention).
constexpr int n_vars = 4, input = 3;

// The stencil: reads two cells on each side in x and y of `u`, writes `v`.
template <class Space, class In, class Out>
void smooth(const Space& space, In u, Out v, const int lo[3], const int hi[3]) {
  const int k = lo[2];
  Kokkos::parallel_for(
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {lo[0], lo[1]}, {hi[0], hi[1]}),
      KOKKOS_LAMBDA(int i, int j) {
        v(i, j, k) = 0.5 * u(i, j, k) + 0.0625 * (u(i - 2, j, k) + u(i + 2, j, k)) +
                     0.0625 * (u(i, j - 2, k) + u(i, j + 2, k)) +
                     0.0625 * (u(i - 1, j, k) + u(i + 1, j, k) + u(i, j - 1, k) + u(i, j + 1, k));
      });
}

TypedAction smooth_action(const std::string& name, int out) {
  return std::move(TypedAction(name)
                       .on_box([out](const ActionContext&, const auto& box) {
                         smooth(box.space(), box.var(input), box.var(out), box.lo(), box.hi());
                       })
                       .reads_guard_cells(2));
}

// A pointwise update, for teams that get packets of tiles (they hold no guard cells).
template <class Space, class In, class Out>
void twice(const Space& space, In u, Out v, const int lo[3], const int hi[3]) {
  const int k = lo[2];
  Kokkos::parallel_for(
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {lo[0], lo[1]}, {hi[0], hi[1]}),
      KOKKOS_LAMBDA(int i, int j) { v(i, j, k) = 2.0 * u(i, j, k); });
}

TypedAction twice_action(const std::string& name, int out) {
  return TypedAction(name).on_box([out](const ActionContext&, const auto& box) {
    twice(box.space(), box.var(input), box.var(out), box.lo(), box.hi());
  });
}

double initial(int gi, int j) { return ((gi * 7 + j * 3) % 11) * 0.1 + (gi % 3 == 0 ? 1.0 : 0.0); }

// The code's mesh: a periodic row of blocks, each stored its own way.
struct CodeMesh {
  using Left = Kokkos::View<double****, Kokkos::LayoutLeft, Kokkos::HostSpace>;    // u(i, j, k, var)
  using Right = Kokkos::View<double****, Kokkos::LayoutRight, Kokkos::HostSpace>;  // u(var, i, j, k)
  static constexpr int pad = 3;  // unused doubles after every row of the raw arrays
  std::vector<Left> left;
  std::vector<Right> right;
  std::vector<std::vector<double>> raw;  // u(i, j, k, var), rows of nx + 2 guard + pad

  // With `code_fills` false the field's guard cells hold a poison value until korch fills them.
  explicit CodeMesh(bool code_fills = true) {
    for (int b = 0; b < n_blocks; ++b) {
      const int ex = widths[b] + 2 * guard, ey = ny + 2 * guard;
      if (b % 3 == 0) left.emplace_back("left", ex, ey, 1, n_vars);
      if (b % 3 == 1) right.emplace_back("right", n_vars, ex, ey, 1);
      if (b % 3 == 2) raw.emplace_back(static_cast<std::size_t>((ex + pad) * ey * n_vars), -1.0);
    }
    int x0 = 0;
    for (int b = 0; b < n_blocks; ++b) {
      for (int i = 0; i < widths[b] + 2 * guard; ++i)
        for (int j = 0; j < ny + 2 * guard; ++j) at(b, input, i, j) = 1e30;
      for (int i = 0; i < widths[b]; ++i)
        for (int j = 0; j < ny; ++j) at(b, input, i + guard, j + guard) = initial(x0 + i, j);
      x0 += widths[b];
    }
    if (code_fills) fill_guards(input);
  }
  double& at(int b, int var, int i, int j) {
    const int ex = widths[b] + 2 * guard, ey = ny + 2 * guard;
    if (b % 3 == 0) return left[static_cast<std::size_t>(b / 3)](i, j, 0, var);
    if (b % 3 == 1) return right[static_cast<std::size_t>(b / 3)](var, i, j, 0);
    return raw[static_cast<std::size_t>(b / 3)][static_cast<std::size_t>(i + (ex + pad) * (j + ey * var))];
  }
  BlockArray array(int b) {
    const int ex = widths[b] + 2 * guard, ey = ny + 2 * guard;
    if (b % 3 == 0) return BlockArray::of(left[static_cast<std::size_t>(b / 3)], IndexOrder::i_j_k_var);
    if (b % 3 == 1) return BlockArray::of(right[static_cast<std::size_t>(b / 3)], IndexOrder::var_i_j_k);
    return BlockArray::of(raw[static_cast<std::size_t>(b / 3)].data(), IndexOrder::i_j_k_var, {ex, ey, 1, n_vars},
                          {1, ex + pad, (ex + pad) * ey, (ex + pad) * ey});
  }
  BlockShape shape(int b) const {
    BlockShape s;
    s.cells = {widths[b], ny, 1};
    s.guard = {guard, guard, 0};
    s.tile_cells = {8, 6, 0};
    return s;
  }
  // The blocks `rank` of `ranks` owns (global id modulo ranks), in a row along x.
  BlockList blocks(int rank = 0, int ranks = 1) {
    BlockList list("code mesh", n_vars);
    for (int b = rank; b < n_blocks; b += ranks) {
      BlockShape s = shape(b);
      s.index = {b, 0, 0};
      s.global_id = b;
      list.add(s, array(b));
    }
    return list;
  }
  // Periodic in x and y: a row of blocks, each its own neighbour in y.
  static NeighbourList neighbours(const BlockList& list, int ranks) {
    return NeighbourList::uniform(list, 2, {n_blocks, 1, 1},
                                  {BoundaryKind::periodic, BoundaryKind::periodic, BoundaryKind::outflow},
                                  [ranks](int global_id) { return global_id % ranks; });
  }
  // Periodic guard cells of `var`: x from the neighbouring blocks, y from the block itself.
  void fill_guards(int var) {
    for (int b = 0; b < n_blocks; ++b) {
      const int l = (b + n_blocks - 1) % n_blocks, r = (b + 1) % n_blocks;
      for (int j = guard; j < ny + guard; ++j)
        for (int g = 0; g < guard; ++g) {
          at(b, var, g, j) = at(l, var, widths[l] + g, j);
          at(b, var, widths[b] + guard + g, j) = at(r, var, guard + g, j);
        }
    }
    for (int b = 0; b < n_blocks; ++b)
      for (int i = 0; i < widths[b] + 2 * guard; ++i)
        for (int g = 0; g < guard; ++g) {
          at(b, var, i, g) = at(b, var, i, ny + g);
          at(b, var, i, ny + guard + g) = at(b, var, i, guard + g);
        }
  }
  // The code's own loop over one global array, for comparison: the stencil, or twice the field.
  static std::vector<double> reference(bool stencil) {
    const int nx = total_width();
    auto u = [&](int gi, int j) { return initial(((gi % nx) + nx) % nx, ((j % ny) + ny) % ny); };
    std::vector<double> v(static_cast<std::size_t>(nx * ny));
    for (int gi = 0; gi < nx; ++gi)
      for (int j = 0; j < ny; ++j)
        v[static_cast<std::size_t>(gi * ny + j)] =
            !stencil
                ? 2.0 * u(gi, j)
                : 0.5 * u(gi, j) + 0.0625 * (u(gi - 2, j) + u(gi + 2, j)) + 0.0625 * (u(gi, j - 2) + u(gi, j + 2)) +
                      0.0625 * (u(gi - 1, j) + u(gi + 1, j) + u(gi, j - 1) + u(gi, j + 1));
    return v;
  }
  static int total_width() {
    int w = 0;
    for (int b = 0; b < n_blocks; ++b) w += widths[b];
    return w;
  }
  // Interior cells of `var` in the blocks `rank` owns that differ from `expected`.
  int differences(int var, const std::vector<double>& expected, int rank = 0, int ranks = 1) {
    int wrong = 0, x0 = 0;
    for (int b = 0; b < n_blocks; ++b) {
      for (int i = 0; i < widths[b] && b % ranks == rank; ++i)
        for (int j = 0; j < ny; ++j)
          if (at(b, var, i + guard, j + guard) != expected[static_cast<std::size_t>((x0 + i) * ny + j)]) ++wrong;
      x0 += widths[b];
    }
    return wrong;
  }
};

RuntimeOptions small_runtime() {
  RuntimeOptions o;
  o.n_teams = 4;
  o.threads_per_team = 3;
  o.n_helpers = 6;
  o.helper_threads = 1;
  return o;
}

// Packets that carry what a slot's action writes carry the code's field in too.
void carry_input(Configuration& c) {
  for (auto& h : c.helpers) {
    auto& v = h.variables;
    if (!v.copy_in.empty() || !v.copy_in_out.empty() || !v.copy_out.empty()) v.copy_in.push_back(input);
  }
}

bool gets_packets_of_tiles(const Configuration& c, const std::string& action) {
  for (const auto& t : c.teams)
    if (t.action == action && t.type == DataType::packet_of_tiles) return true;
  return false;
}

// The built-in with its slot A bound to `action`.
Configuration running(const std::string& builtin, const std::string& action) {
  return configurations::get(builtin, {{"A", action}});
}

}  // namespace

TEST_CASE(
    "Embedded blocks: one box routine reading two guard cells, korch filling them, equals the code's loop on "
    "every built-in") {
  const Communicator world = Communicator::world();
  const std::vector<double> stencil = CodeMesh::reference(true), doubled = CodeMesh::reference(false);
  const std::string names[3] = {"advect x", "advect y", "advect z"};  // the code's names, bound by position
  Runtime runtime(small_runtime());
  int runs = 0;
  for (const auto& name : configurations::names()) {
    // gpu_internal hands its action each block's metadata only: data already on the device, found
    // by the action itself, which a box routine over the code's host arrays is not.
    if (name == "gpu_internal") continue;
    CAPTURE(name);
    const auto slots = configurations::slots(name);
    const std::vector<std::string> bound(names, names + slots.size());
    Configuration c = configurations::get(name, bound);
    carry_input(c);
    Bundle bundle("step");
    for (std::size_t s = 0; s < slots.size(); ++s) {
      const int out = static_cast<int>(s);
      bundle.add(gets_packets_of_tiles(c, bound[s]) ? twice_action(bound[s], out) : smooth_action(bound[s], out));
    }
    // The code's blocks on this rank; korch fills the field's guard cells from the neighbour lists
    // while the cycle runs, handing out each block once they are valid.
    CodeMesh mesh(false);
    BlockList list = mesh.blocks(world.rank(), world.size());
    GuardCellExchange exchange(list, CodeMesh::neighbours(list, world.size()), world);
    GuardCellIterator filled(exchange, input, 1);
    runtime.execute(bundle, c, list, &filled);
    for (std::size_t s = 0; s < slots.size(); ++s) {
      CAPTURE(bound[s]);
      CHECK(mesh.differences(static_cast<int>(s), gets_packets_of_tiles(c, bound[s]) ? doubled : stencil, world.rank(),
                             world.size()) == 0);
    }
    ++runs;
  }
  CHECK(runs == static_cast<int>(configurations::names().size()) - 1);
}

TEST_CASE("Embedded blocks: a box routine sees a strided view of the code's own array") {
  CodeMesh mesh;
  BlockList list = mesh.blocks();
  Runtime runtime(small_runtime());
  // Routines run on team threads: they count, the test checks afterwards.
  std::atomic<int> strided{0}, same_memory{0}, same_source{0};
  Bundle bundle("look");
  bundle.add(TypedAction("look").on_box([&](const ActionContext&, const auto& box) {
    using View = std::decay_t<decltype(box)>;
    if constexpr (View::kind == BoxSource::strided) {
      const auto u = box.var(0);
      ++strided;
      // The view is the code's memory itself: the same address for the same cell.
      if (&u(box.lo()[0], box.lo()[1], 0) == &mesh.at(box.block_id(), 0, box.lo()[0], box.lo()[1])) ++same_memory;
      if (&box.source() == &list) ++same_source;
    }
  }));
  runtime.execute(bundle, running("cpu_only", "look"), list);
  const int tiles = static_cast<int>(all_tiles(list).size());
  CHECK(strided == tiles);
  CHECK(same_memory == tiles);
  CHECK(same_source == tiles);
}

TEST_CASE("Embedded blocks: an action reading more guard cells than the blocks have is refused naming the block") {
  CodeMesh mesh;
  BlockList list = mesh.blocks();
  Runtime runtime(small_runtime());
  Bundle bundle("wide");
  bundle.add(std::move(TypedAction("wide").on_box([](const ActionContext&, const auto&) {}).reads_guard_cells(3)));
  for (const std::string name : {"cpu_only", "gpu_only"}) {
    CAPTURE(name);
    // Whichever block's item fails first is named.
    const std::string message = test::error_of([&] { runtime.execute(bundle, running(name, "wide"), list); });
    CHECK(test::contains(message, "action 'wide' reads 3 guard cells in x, but block "));
    CHECK(test::contains(message, " of the block list 'code mesh' has 2 there"));
    CHECK(test::contains(message, "give the block at least 3 guard cells in x"));
  }
  CHECK_THROWS_WITH_AS(TypedAction("zero").reads_guard_cells(0), doctest::Contains("reads_guard_cells(0)"), Error);
}

TEST_CASE("Embedded blocks: a packet of tiles has no guard cells for an action that reads them") {
  CodeMesh mesh;
  BlockList list = mesh.blocks();
  Runtime runtime(small_runtime());
  Configuration c = configurations::get("hybrid_distributor");
  // The fpga team gets packets of tiles of action B.
  Bundle bundle("smooth");
  bundle.add(TypedAction("A").on_box([](const ActionContext&, const auto&) {}));
  bundle.add(std::move(TypedAction("B").on_box([](const ActionContext&, const auto&) {}).reads_guard_cells(1)));
  CHECK_THROWS_WITH_AS(runtime.execute(bundle, c, list), doctest::Contains("stores none around its entries"), Error);
}

TEST_CASE("Embedded blocks: shapes that do not match the code's arrays are refused naming block and extents") {
  CodeMesh mesh;
  BlockList list("code mesh", n_vars);
  BlockShape s = mesh.shape(0);
  // Declared guard width 1 for arrays with 2.
  s.guard = {1, 1, 0};
  CHECK_THROWS_WITH_AS(list.add(s, mesh.array(0)),
                       doctest::Contains("block 0 has extents (var 4, i 20, j 16, k 1) but its shape needs "
                                         "(var 4, i 18, j 14, k 1)"),
                       Error);
  // Five variables declared for arrays of four.
  BlockList five("five", 5);
  CHECK_THROWS_WITH_AS(five.add(mesh.shape(1), mesh.array(1)), doctest::Contains("(var 4, i 14, j 16, k 1)"), Error);
  // The View's indices given in the wrong order.
  CHECK_THROWS_WITH_AS(list.add(mesh.shape(0), BlockArray::of(mesh.left[0], IndexOrder::var_i_j_k)),
                       doctest::Contains("but its shape needs"), Error);
  // Strides under which two cells share memory.
  std::vector<double> cells(4 * 16 * n_vars);
  BlockShape small;
  small.cells = {4, 4, 1};
  CHECK_THROWS_WITH_AS(
      list.add(small, BlockArray::of(cells.data(), IndexOrder::i_j_k_var, {4, 4, 1, n_vars}, {1, 2, 16, 16})),
      doctest::Contains("overlap"), Error);
  // A padded raw array is fine.
  CHECK(list.add(mesh.shape(2), mesh.array(2)) == 0);
}

TEST_CASE("Embedded blocks: a cycle over a list without blocks is an error, not a silent no-op") {
  Runtime runtime(small_runtime());
  BlockList empty("empty", n_vars);
  Bundle bundle("smooth");
  bundle.add(smooth_action("smooth", 0));
  CHECK_THROWS_WITH_AS(runtime.execute(bundle, running("cpu_only", "smooth"), empty),
                       doctest::Contains("block list 'empty', which has no blocks"), Error);
}

}  // namespace test_embedded_blocks
