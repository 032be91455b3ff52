// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Face variables: a code's own face arrays (Fortran-ordered, padded) and a korch::Grid's are seen
// by tiles, blocks and packet entries in the cells' indices; a flux action writes them and an
// update action reads them on every configuration that can run it, host and device, and gives the
// plain loop's bits; packets carry exactly the faces they list; mistakes in shape are errors.
#include "test_error_support.hpp"

#include <korch/backend/memory_pool.hpp>
#include <korch/backend/thread_spaces.hpp>
#include <korch/block_list.hpp>
#include <korch/configuration.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/data_mover.hpp>
#include <korch/packet_pack.hpp>
#include <korch/runtime.hpp>
#include <korch/typed_action.hpp>
#include <korch/unpacker.hpp>

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>

#include <memory>
#include <string>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_face_variables {

using namespace korch;

namespace {

constexpr int guard = 1;
constexpr int n_vars = 2;       // 0: u, 1: the update's result
constexpr int n_face_vars = 2;  // 0: the flux, 1: never written (must stay as it was)
const int widths[] = {7, 5, 9};
const int heights[] = {5, 9, 4};
constexpr int n_blocks = 3;

double initial(int b, int i, int j) { return ((b * 13 + i * 7 + j * 3) % 11) * 0.25 + 0.1 * b; }

// The flux through face (i, j) across `axis`: the difference of the cells on its two sides.
template <class Space, class U, class F>
void fluxes(const Space& space, U u, F f, const Box& faces, int axis) {
  const int di = axis == 0 ? 1 : 0, dj = axis == 1 ? 1 : 0;
  Kokkos::parallel_for(
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {faces.lo[0], faces.lo[1]}, {faces.hi[0], faces.hi[1]}),
      KOKKOS_LAMBDA(int i, int j) { f(i, j, 0) = 0.5 * (u(i, j, 0) - u(i - di, j - dj, 0)); });
}

// The cell update from the fluxes through its faces.
template <class Space, class U, class F>
void update(const Space& space, U u, U out, F fx, F fy, const Box& box) {
  Kokkos::parallel_for(
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {box.lo[0], box.lo[1]}, {box.hi[0], box.hi[1]}),
      KOKKOS_LAMBDA(int i, int j) {
        out(i, j, 0) = u(i, j, 0) + (fx(i + 1, j, 0) - fx(i, j, 0)) + (fy(i, j + 1, 0) - fy(i, j, 0));
      });
}

TypedAction flux_action() {
  return std::move(TypedAction("A")
                       .on_box([](const ActionContext&, const auto& box) {
                         for (int axis = 0; axis < 2; ++axis)
                           fluxes(box.space(), box.var(0), box.face(axis, 0), box.owned_faces(axis), axis);
                       })
                       .reads_guard_cells(1));
}

TypedAction update_action() {
  return TypedAction("A").on_box([](const ActionContext&, const auto& box) {
    update(box.space(), box.var(0), box.var(1), box.face(0, 0), box.face(1, 0), box.box());
  });
}

// The same two actions as one kernel per packet (PacketPack), entry-local indices throughout.
template <class Space>
void pack_fluxes(const Space& space, const PacketPack& p) {
  Kokkos::parallel_for(
      p.face_policy(space), KOKKOS_LAMBDA(int e, int i, int j, int k) {
        for (int axis = 0; axis < 2; ++axis)
          if (p.bounds_update(e, axis, i, j, k)) {
            const int di = axis == 0 ? 1 : 0, dj = axis == 1 ? 1 : 0;
            p.face(e, axis, 0, i, j, k) = 0.5 * (p(e, 0, i, j, k) - p(e, 0, i - di, j - dj, k));
          }
      });
}

template <class Space>
void pack_update(const Space& space, const PacketPack& p) {
  Kokkos::parallel_for(
      p.policy(space), KOKKOS_LAMBDA(int e, int i, int j, int k) {
        if (!p.updates(e, i, j, k)) return;
        p(e, 1, i, j, k) = p(e, 0, i, j, k) + (p.face(e, 0, 0, i + 1, j, k) - p.face(e, 0, 0, i, j, k)) +
                           (p.face(e, 1, 0, i, j + 1, k) - p.face(e, 1, 0, i, j, k));
      });
}

TypedAction with_packs(TypedAction action, bool flux) {
  return std::move(action.on_packet([flux](const ActionContext& ctx, const PacketPack& p) {
    if (flux)
      pack_fluxes(ctx.device_space(), p);
    else
      pack_update(ctx.device_space(), p);
  }));
}

// The code's blocks: cells u(i, j, k, var) in Kokkos LayoutLeft; faces across x in LayoutLeft
// f(i, j, k, var), faces across y in a raw array padded after every row.
struct CodeMesh {
  using Left = Kokkos::View<double****, Kokkos::LayoutLeft, Kokkos::HostSpace>;
  static constexpr int pad = 3;
  std::vector<Left> cells, x_faces;
  std::vector<std::vector<double>> y_faces;

  CodeMesh() {
    for (int b = 0; b < n_blocks; ++b) {
      const int ex = widths[b] + 2 * guard, ey = heights[b] + 2 * guard;
      cells.emplace_back("u", ex, ey, 1, n_vars);
      x_faces.emplace_back("fx", ex + 1, ey, 1, n_face_vars);
      y_faces.emplace_back(static_cast<std::size_t>((ex + pad) * (ey + 1) * n_face_vars), -7.0);
      for (int i = 0; i < ex; ++i)
        for (int j = 0; j < ey; ++j) cells[b](i, j, 0, 0) = initial(b, i, j);
      Kokkos::deep_copy(x_faces[b], -7.0);
    }
  }
  BlockShape shape(int b) const {
    BlockShape s;
    s.cells = {widths[b], heights[b], 1};
    s.guard = {guard, guard, 0};
    s.tile_cells = {4, 3, 0};
    return s;
  }
  BlockArray y_array(int b) {
    const int ex = widths[b] + 2 * guard, ey = heights[b] + 2 * guard;
    return BlockArray::of(y_faces[b].data(), IndexOrder::i_j_k_var, {ex, ey + 1, 1, n_face_vars},
                          {1, ex + pad, (ex + pad) * (ey + 1), (ex + pad) * (ey + 1)});
  }
  BlockList::FaceArrays faces(int b) {
    return {BlockArray::of(x_faces[b], IndexOrder::i_j_k_var), y_array(b), BlockArray{}};
  }
  std::unique_ptr<BlockList> list() {
    auto blocks = std::make_unique<BlockList>("code mesh", n_vars, n_face_vars);
    for (int b = 0; b < n_blocks; ++b) blocks->add(shape(b), BlockArray::of(cells[b], IndexOrder::i_j_k_var), faces(b));
    return blocks;
  }
};

// The plain loop's result for one block: fluxes, then the update, in the cells' indices.
double expected(const BlockView& u, int i, int j) {
  const auto fx = [&](int fi, int fj) { return 0.5 * (u(0, fi, fj, 0) - u(0, fi - 1, fj, 0)); };
  const auto fy = [&](int fi, int fj) { return 0.5 * (u(0, fi, fj, 0) - u(0, fi, fj - 1, 0)); };
  return u(0, i, j, 0) + (fx(i + 1, j) - fx(i, j)) + (fy(i, j + 1) - fy(i, j));
}

// Every interior cell of every block equals the plain loop's bits, every flux the difference, and
// face variable 1 still holds what it held.
void check_source(const DataSource& source, double untouched) {
  for (int b = 0; b < source.n_blocks(); ++b) {
    CAPTURE(b);
    const BlockView u = source.block_view(b);
    const Box& in = source.block(b).interior;
    bool cells = true, faces = true, others = true;
    for (int i = in.lo[0]; i < in.hi[0]; ++i)
      for (int j = in.lo[1]; j < in.hi[1]; ++j) cells = cells && u(1, i, j, 0) == expected(u, i, j);
    for (int axis = 0; axis < 2; ++axis) {
      const BlockView f = source.face_view(b, axis);
      const Box around = face_box(in, axis);
      const int di = axis == 0 ? 1 : 0, dj = axis == 1 ? 1 : 0;
      for (int i = around.lo[0]; i < around.hi[0]; ++i)
        for (int j = around.lo[1]; j < around.hi[1]; ++j) {
          faces = faces && f(0, i, j, 0) == 0.5 * (u(0, i, j, 0) - u(0, i - di, j - dj, 0));
          others = others && f(1, i, j, 0) == untouched;
        }
    }
    CHECK(cells);
    CHECK(faces);
    CHECK(others);
  }
}

void run_fluxes_and_update(Runtime& rt, const Configuration& configuration, DataSource& source, bool packs = false) {
  Bundle flux("fluxes");
  flux.add(packs ? with_packs(flux_action(), true) : flux_action());
  rt.execute(flux, configuration, source);
  Bundle step("update");
  step.add(packs ? with_packs(update_action(), false) : update_action());
  rt.execute(step, configuration, source);
}

GridSpec grid_spec(bool resident) {
  GridSpec s;
  s.block_cells = {7, 5, 1};
  s.blocks = {2, 2, 1};
  s.guard = guard;
  s.guard_dims = 2;
  s.n_vars = n_vars;
  s.n_face_vars = n_face_vars;
  s.tile_cells = {4, 3, 0};
  s.resident = resident;
  return s;
}

void fill_grid(Grid& g) {
  g.fill([](int b, int v, int i, int j, int) { return v == 0 ? initial(b, i, j) : 0.0; });
  for (int b = 0; b < g.n_blocks(); ++b)
    for (int axis = 0; axis < 2; ++axis) {
      const BlockView f = g.face_view(b, axis);
      for (int v = 0; v < n_face_vars; ++v)
        for (std::size_t i = 0; i < f.extent(1); ++i)
          for (std::size_t j = 0; j < f.extent(2); ++j) f(v, i, j, 0) = -7.0;
    }
}

const char* const configurations_with_faces[] = {"cpu_only", "gpu_only", "cpu_gpu_data_parallel"};

struct Pools {
  MemoryPool pinned{"pinned", PoolMemory::pinned_host};
  MemoryPool device{"device", PoolMemory::device};
};

}  // namespace

TEST_CASE("Face variables: a code's own face arrays, written by fluxes and read by the update, on host and device") {
  Runtime rt;
  for (const char* name : configurations_with_faces) {
    CAPTURE(std::string(name));
    CodeMesh code;
    auto blocks = code.list();
    run_fluxes_and_update(rt, configurations::get(name), *blocks);
    check_source(*blocks, -7.0);
    // The views are the code's own memory: the padded array holds the flux where the code reads it.
    const int ex = widths[1] + 2 * guard;
    const double* y = code.y_faces[1].data();
    CHECK(y[2 + (ex + CodeMesh::pad) * 3] == 0.5 * (code.cells[1](2, 3, 0, 0) - code.cells[1](2, 2, 0, 0)));
    CHECK(code.x_faces[0](1, 1, 0, 0) == 0.5 * (code.cells[0](1, 1, 0, 0) - code.cells[0](0, 1, 0, 0)));
  }
}

TEST_CASE("Face variables: a korch::Grid's faces, resident or not, on host and device configurations") {
  Runtime rt;
  for (const bool resident : {false, true})
    for (const char* name : configurations_with_faces) {
      CAPTURE(resident);
      CAPTURE(std::string(name));
      Grid g(grid_spec(resident));
      fill_grid(g);
      run_fluxes_and_update(rt, configurations::get(name), g);
      check_source(g, -7.0);
      const Grid copy = g.clone();
      CHECK(copy.face_view(3, 1)(0, 2, 3, 0) == g.face_view(3, 1)(0, 2, 3, 0));
    }
}

TEST_CASE("Face variables: one kernel per packet (PacketPack) writes and reads them as the box routines do") {
  Runtime rt;
  for (const char* name : {"gpu_only", "cpu_gpu_data_parallel"}) {
    CAPTURE(std::string(name));
    CodeMesh code;
    auto blocks = code.list();
    run_fluxes_and_update(rt, configurations::get(name), *blocks, true);
    check_source(*blocks, -7.0);
    for (const bool resident : {false, true}) {
      CAPTURE(resident);
      Grid g(grid_spec(resident));
      fill_grid(g);
      run_fluxes_and_update(rt, configurations::get(name), g, true);
      check_source(g, -7.0);
    }
  }
}

TEST_CASE("Face variables: a packet carries the faces it lists, each way as listed, and counts their bytes") {
  ThreadSpaces spaces;
  Pools pools;
  Grid g(grid_spec(false));
  fill_grid(g);
  PacketVariables vars;
  vars.copy_in = {0};
  vars.face_copy_in = {1};
  vars.face_copy_out = {0};
  DataPacket p(g, DataType::packet_of_tiles, vars, pools.pinned, pools.device);
  CHECK(p.carries_face(0));
  CHECK_FALSE(p.carries_face(2));
  for (int t = 0; t < static_cast<int>(g.tiles_of(2).size()); ++t) p.add_tile(2, t);
  p.pack();
  // Tile 0 is cells [1, 5) x [1, 4): 5 x 3 faces across x, 4 x 4 across y; its face_copy_in
  // variable is packed, its face_copy_out one is not.
  const auto in_x = p.host_face(0, 0, 1);
  CHECK(in_x.extent(0) == 5);
  CHECK(in_x.extent(1) == 3);
  CHECK(p.host_face(0, 1, 1).extent(1) == 4);
  CHECK(in_x(4, 2, 0) == -7.0);
  const std::size_t cells = 4 * 3 + 4 * 2 + 3 * 3 + 3 * 2;  // tiles 4 + 3 cells by 3 + 2
  const std::size_t faces = 5 * 3 + 4 * 4 + 5 * 2 + 4 * 3 + 4 * 3 + 3 * 4 + 4 * 2 + 3 * 3;
  DataMover{MoveDirection::host_to_device}(p, spaces.device());
  CHECK(p.bytes_to_device() >= (cells + faces) * sizeof(double));
  const PacketPack pack(p);
  CHECK(pack.carries_face(0));
  CHECK(pack.carries_face(1));
  CHECK_FALSE(pack.carries_face(2));
  const auto out = p.device_face(3, 1, 0);  // tile 3: cells [5, 8) x [4, 6)
  Kokkos::deep_copy(spaces.device(), out, 2.5);
  spaces.device().fence();
  CHECK(p.bytes_to_host() >= faces * sizeof(double));
  CHECK(p.bytes_to_host() < (faces + 8 * 4) * sizeof(double));
  DataMover{MoveDirection::device_to_host}(p, spaces.device());
  Unpacker()(p);
  const BlockView y = g.face_view(2, 1);
  CHECK(y(0, 5, 4, 0) == 2.5);
  CHECK(y(0, 7, 6, 0) == 2.5);  // the tile's high face
  CHECK(y(0, 7, 7, 0) == -7.0);
  CHECK(y(1, 5, 4, 0) == -7.0);  // copy-in: not written back
}

TEST_CASE("Face variables: shapes, lists and axes that do not fit are errors naming what to fix") {
  CodeMesh code;
  BlockList list("code mesh", n_vars, n_face_vars);
  const BlockArray cells = BlockArray::of(code.cells[0], IndexOrder::i_j_k_var);
  CHECK(contains(error_of([&] { list.add(code.shape(0), cells); }), "give its face arrays"));
  auto faces = code.faces(0);
  std::swap(faces[0], faces[1]);
  CHECK(contains(error_of([&] { list.add(code.shape(0), cells, faces); }), "block 0's face array across x"));
  faces = code.faces(0);
  faces[2] = faces[1];
  CHECK(contains(error_of([&] { list.add(code.shape(0), cells, faces); }), "no faces across it"));
  faces = code.faces(0);
  faces[1].device = true;
  CHECK(contains(error_of([&] { list.add(code.shape(0), cells, faces); }), "face arrays are host memory"));
  faces = code.faces(0);
  faces[1].stride[2] = 1;  // rows overlap
  CHECK(contains(error_of([&] { list.add(code.shape(0), cells, faces); }), "overlap"));
  CHECK(list.n_blocks() == 0);
  CHECK(contains(error_of([&] { (void)list.face_view(0, 0); }), "the list has no blocks; add them first"));
  list.add(code.shape(0), cells, code.faces(0));
  CHECK(contains(error_of([&] { (void)list.face_view(0, 2); }), "no faces across z"));
  CHECK(contains(error_of([&] { (void)list.face_view(0, 3); }), "use axis 0 (x), 1 (y) or 2 (z)"));

  BlockList plain("plain", n_vars);
  CHECK(contains(error_of([&] { plain.add(code.shape(0), cells, code.faces(0)); }),
                 "BlockList(name, n_vars, n_face_vars)"));
  plain.add(code.shape(0), cells);
  CHECK(contains(error_of([&] { (void)plain.face_view(0, 0); }), "has no face variables"));
  CHECK(contains(error_of([&] { BlockList("bad", 1, -1); }), "n_face_vars is -1"));

  Pools pools;
  PacketVariables vars;
  vars.face_copy_out = {2};
  CHECK(contains(error_of([&] { DataPacket(list, DataType::packet_of_blocks, vars, pools.pinned, pools.device); }),
                 "face_copy_out names face variable 2"));
  vars.face_copy_out = {0};
  vars.face_copy_in = {0};
  CHECK(contains(error_of([&] { DataPacket(list, DataType::packet_of_blocks, vars, pools.pinned, pools.device); }),
                 "face variable 0 is in face_copy_in and in face_copy_out"));
  vars.face_copy_in = {};
  DataPacket p(list, DataType::packet_of_blocks, vars, pools.pinned, pools.device);
  p.add_block(0);
  p.pack();
  CHECK(contains(error_of([&] { (void)p.host_face(0, 0, 1); }), "face variable 1 is not in this packet"));
  CHECK(contains(error_of([&] { (void)p.host_face(0, 2, 0); }), "has no faces across axis 2"));
  CHECK(contains(error_of([&] { (void)p.device_face(0, 0, 0); }), "device_face() needs the packet on the device"));

  // A box routine asking for faces the source does not keep is stopped by the cycle with the reason.
  Runtime rt;
  Bundle flux("fluxes");
  flux.add(flux_action());
  CHECK(contains(error_of([&] { rt.execute(flux, configurations::get("cpu_only"), plain); }), "has no face variables"));
}

TEST_CASE("Face variables: a configuration's face lists survive JSON and reach its packets") {
  const std::string text = R"({"name": "faces",
    "teams": [ {"name": "gpu", "type": "packet_of_blocks", "action": "A", "threads": 1} ],
    "helpers": [ {"name": "to_gpu", "kind": "aggregator_mover", "input": "block", "output": "packet_of_blocks",
                  "packet_blocks": 2, "variables": {"copy_in_out": [0, 1], "face_copy_in_out": [0]}},
                 {"name": "from_gpu", "kind": "mover_unpacker", "input": "packet_of_blocks"} ],
    "work": [ {"from": "to_gpu", "to": "gpu"}, {"from": "gpu", "to": "from_gpu"} ],
    "distributor": {"kind": "data_parallel", "groups": [ {"pipelines": ["to_gpu"]} ]}})";
  const Configuration c = Configuration::from_json(text);
  CHECK(c.helpers[0].variables.face_copy_in_out == std::vector<int>{0});
  const Configuration again = Configuration::from_json(c.to_json());
  CHECK(again.helpers[0].variables.face_copy_in_out == std::vector<int>{0});
  CHECK(again.helpers[0].variables.face_copy_in.empty());
  std::string wrong = text;
  wrong.replace(wrong.find("[0]}}"), 3, "\"x\"");
  CHECK(contains(error_of([&] { (void)Configuration::from_json(wrong); }), "face_copy_in_out"));

  Runtime rt;
  CodeMesh code;
  auto blocks = code.list();
  run_fluxes_and_update(rt, c, *blocks);
  check_source(*blocks, -7.0);
}

}  // namespace test_face_variables
