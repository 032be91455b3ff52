// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The C API on every built-in configuration: a code's own blocks (Fortran-ordered and C-ordered
// arrays, two widths, guard cells, a field and one output per slot) in a periodic row split over
// the ranks, one C routine that reads two guard cells bound to each slot of each built-in, korch
// filling the guard cells inside the cycle; every output equals the code's own loop bitwise. The
// routine on packets gets each entry in its block's own layout. gpu_internal (metadata only) is
// refused naming it, and so is every packet configuration on a build whose packets live in device
// memory. Runs as one process and under mpirun.
#include <korch/backend/spaces.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/korch_c.h>

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>

#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_c_api_builtins {

namespace {

constexpr int n_blocks = 6, ny = 4, g = 2, n_vars = 4, field = 0;
constexpr bool host_packets = Kokkos::SpaceAccessibility<Kokkos::HostSpace, korch::DeviceMemSpace>::accessible;
int width_of(int global) { return global % 2 == 0 ? 5 : 7; }
int origin_of(int global) {
  int x = 0;
  for (int b = 0; b < global; ++b) x += width_of(b);
  return x;
}
constexpr int nx_total = 36;
double initial(int x, int y) { return ((x * 7 + y * 3) % 11) * 0.1 + (x % 3 == 0 ? 1.0 : 0.0); }

// The update both the routine and the code's loop compute, in the same order of operations.
double smooth(double c, double w1, double e1, double s1, double n1, double w2, double e2, double s2, double n2) {
  return 0.5 * c + 0.0625 * (w2 + e2 + s2 + n2) + 0.0625 * (w1 + e1 + s1 + n1);
}

// What one slot's routine does: the stencil into `out`, or twice the field where its team gets
// packets of tiles (they hold no guard cells).
struct Slot {
  int out;
  bool stencil;
};

int step(const korch_item* item, double* u, void* user) {
  const auto* slot = static_cast<const Slot*>(user);
  const int64_t* s = item->stride;
  auto at = [&](int v, int i, int j, int k) -> double& {
    return u[v * s[0] + (i - 1 + item->guard[0]) * s[1] + (j - 1 + item->guard[1]) * s[2] +
             (k - 1 + item->guard[2]) * s[3]];
  };
  for (int k = item->lo[2]; k <= item->hi[2]; ++k)
    for (int j = item->lo[1]; j <= item->hi[1]; ++j)
      for (int i = item->lo[0]; i <= item->hi[0]; ++i)
        at(slot->out, i, j, k) = slot->stencil
                                     ? smooth(at(field, i, j, k), at(field, i - 1, j, k), at(field, i + 1, j, k),
                                              at(field, i, j - 1, k), at(field, i, j + 1, k), at(field, i - 2, j, k),
                                              at(field, i + 2, j, k), at(field, i, j - 2, k), at(field, i, j + 2, k))
                                     : 2.0 * at(field, i, j, k);
  return 0;
}

// The code's own loop over the global periodic field.
double expected(int x, int y, bool stencil) {
  auto u = [](int gx, int gy) { return initial((gx + nx_total) % nx_total, (gy + ny) % ny); };
  return stencil ? smooth(u(x, y), u(x - 1, y), u(x + 1, y), u(x, y - 1), u(x, y + 1), u(x - 2, y), u(x + 2, y),
                          u(x, y - 2), u(x, y + 2))
                 : 2.0 * u(x, y);
}

// The code's blocks on this rank: even global ids Fortran-ordered u(i, j, 1, var), odd ones
// C-ordered u[var][i][j][1].
struct Mesh {
  int rank = 0, size = 1;
  std::vector<int> globals;
  std::vector<std::vector<double>> data;
  korch_blocks* blocks = nullptr;

  Mesh() {
    REQUIRE(korch_ranks(&rank, &size) == KORCH_OK);
    REQUIRE(korch_blocks_create("code blocks", n_vars, &blocks) == KORCH_OK);
    for (int global = 0; global < n_blocks; ++global) {
      if (global * size / n_blocks != rank) continue;
      const int w = width_of(global), ex = w + 2 * g, ey = ny + 2 * g;
      data.emplace_back(static_cast<std::size_t>(n_vars * ex * ey));
      const korch_block_shape shape{{w, ny, 1}, {g, g, 0}, {3, 2, 0}, 0, 1, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}};
      const bool fortran = global % 2 == 0;
      const int64_t f_extent[4] = {ex, ey, 1, n_vars}, c_extent[4] = {n_vars, ex, ey, 1};
      int32_t id = -1;
      REQUIRE(korch_blocks_add_global(blocks, &shape, global, data.back().data(), fortran ? f_extent : c_extent,
                                      fortran ? KORCH_FORTRAN_ORDER : KORCH_C_ORDER, &id) == KORCH_OK);
      globals.push_back(global);
    }
  }
  ~Mesh() { korch_blocks_destroy(blocks); }
  Mesh(const Mesh&) = delete;
  Mesh& operator=(const Mesh&) = delete;

  // (var, i, j) of local block b, 0-based with guard cells.
  double& at(std::size_t b, int v, int i, int j) {
    const int ex = width_of(globals[b]) + 2 * g, ey = ny + 2 * g;
    const bool fortran = globals[b] % 2 == 0;
    return data[b][static_cast<std::size_t>(fortran ? i + ex * (j + ey * v) : (v * ex + i) * ey + j)];
  }
  // The field's interior from the code's initial state, its guard cells NaN until korch fills them,
  // the outputs 0.
  void paint() {
    for (std::size_t b = 0; b < globals.size(); ++b) {
      const int w = width_of(globals[b]), x0 = origin_of(globals[b]);
      for (int i = 0; i < w + 2 * g; ++i)
        for (int j = 0; j < ny + 2 * g; ++j) {
          const bool interior = i >= g && i < g + w && j >= g && j < g + ny;
          at(b, field, i, j) = interior ? initial(x0 + i - g, j - g) : std::numeric_limits<double>::quiet_NaN();
          for (int v = 1; v < n_vars; ++v) at(b, v, i, j) = 0.0;
        }
    }
  }
  // Interior cells of output `var` that differ from the code's loop.
  int differences(int var, bool stencil) {
    int wrong = 0;
    for (std::size_t b = 0; b < globals.size(); ++b) {
      const int w = width_of(globals[b]), x0 = origin_of(globals[b]);
      for (int i = 0; i < w; ++i)
        for (int j = 0; j < ny; ++j)
          if (at(b, var, i + g, j + g) != expected(x0 + i, j, stencil)) ++wrong;
    }
    return wrong;
  }
  // Periodic in x over the ranks' blocks, and each block its own neighbour in y.
  korch_neighbours* neighbours() const {
    korch_neighbours* n = nullptr;
    REQUIRE(korch_neighbours_create(2, &n) == KORCH_OK);
    for (int b = 0; b < static_cast<int>(globals.size()); ++b)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          if (dx == 0 && dy == 0) continue;
          const int other = (globals[static_cast<std::size_t>(b)] + dx + n_blocks) % n_blocks;
          const int32_t direction[3] = {dx, dy, 0};
          REQUIRE(korch_neighbours_set(n, b, direction, KORCH_NEIGHBOUR_BLOCK, other, other * size / n_blocks) ==
                  KORCH_OK);
        }
    return n;
  }
};

// Slots whose teams get packets of tiles, which hold no guard cells: they run the pointwise update.
const std::set<std::pair<std::string, int>> pointwise = {{"hybrid_distributor", 1}, {"mashup", 2}};
bool uses_packets(const std::string& name) { return name != "cpu_only" && name != "gpu_internal"; }

std::string last() { return korch_last_error(); }

}  // namespace

TEST_CASE("C API: one C routine on a code's own blocks equals the code's loop on every built-in that can run it") {
  REQUIRE(korch_initialize(nullptr) == KORCH_OK);
  {
    Mesh mesh;
    korch_neighbours* near = mesh.neighbours();
    korch_exchange* fill = nullptr;
    REQUIRE(korch_exchange_create(mesh.blocks, near, nullptr, &fill) == KORCH_OK);
    const char* const actions[3] = {"smooth x", "smooth y", "smooth z"};  // the code's names for the slots
    int ran = 0, refused = 0;
    // Every built-in the library has, each with as many of the code's names as it has slots.
    const std::vector<std::string> builtins = korch::configurations::names();
    for (const std::string& name : builtins) {
      CAPTURE(name);
      const int n_slots = static_cast<int>(korch::configurations::slots(name).size());
      REQUIRE(n_slots <= static_cast<int>(std::size(actions)));
      korch_configuration* configuration = nullptr;
      REQUIRE(korch_configuration_builtin_bound(name.c_str(), actions, n_slots, &configuration) == KORCH_OK);
      korch_bundle* bundle = nullptr;
      REQUIRE(korch_bundle_create("step", &bundle) == KORCH_OK);
      std::vector<Slot> slots;
      for (int s = 0; s < n_slots; ++s) slots.push_back({1 + s, pointwise.count({name, s}) == 0});
      for (int s = 0; s < n_slots; ++s) {
        REQUIRE(korch_bundle_add(bundle, actions[s], step, &slots[static_cast<std::size_t>(s)]) == KORCH_OK);
        const int32_t reads[1] = {field}, writes[1] = {1 + s};
        REQUIRE(korch_configuration_packet_variables(configuration, actions[s], reads, 1, writes, 1) == KORCH_OK);
      }
      mesh.paint();
      const int status = korch_execute_filled(bundle, configuration, fill, field, 1);
      if (name == "gpu_internal" || (!host_packets && uses_packets(name))) {
        CHECK(status == KORCH_ERROR);
        CHECK(last().find("configuration '" + name + "'") != std::string::npos);
        CHECK(last().find("use cpu_only") != std::string::npos);
        ++refused;
      } else {
        REQUIRE_MESSAGE(status == KORCH_OK, last());
        for (int s = 0; s < n_slots; ++s) {
          CAPTURE(actions[s]);
          CHECK(mesh.differences(1 + s, slots[static_cast<std::size_t>(s)].stencil) == 0);
        }
        ++ran;
      }
      korch_bundle_destroy(bundle);
      korch_configuration_destroy(configuration);
    }
    CHECK(ran + refused == static_cast<int>(builtins.size()));
    CHECK(refused == (host_packets ? 1 : static_cast<int>(builtins.size()) - 1));
    korch_exchange_destroy(fill);
    korch_neighbours_destroy(near);
  }
  REQUIRE(korch_finalize() == KORCH_OK);
}

TEST_CASE("C API: binding names to a built-in's slots and declaring packet variables are checked") {
  korch_configuration* c = nullptr;
  const char* const three[3] = {"a", "b", "c"};
  CHECK(korch_configuration_builtin_bound("cpu_gpu_action_parallel", three, 3, &c) == KORCH_ERROR);
  CHECK(c == nullptr);
  CHECK(last().find("configuration 'cpu_gpu_action_parallel' has 2 slots (A, B)") != std::string::npos);
  CHECK(korch_configuration_builtin_bound("cpu_gpu_action_parallel", three, 1, &c) == KORCH_ERROR);
  CHECK(last().find("'B'") != std::string::npos);
  CHECK(korch_configuration_builtin_bound("cpu_gpu_action_parallel", three, -1, &c) == KORCH_ERROR);
  CHECK(last().find("its slots A, B") != std::string::npos);
  CHECK(korch_configuration_builtin_bound("gpu_onyl", three, 1, &c) == KORCH_ERROR);
  CHECK(last().find("gpu_only") != std::string::npos);

  REQUIRE(korch_configuration_builtin_bound("split_itor", three, 1, &c) == KORCH_OK);  // B is optional
  const int32_t reads[1] = {0}, writes[1] = {1}, negative[1] = {-1};
  CHECK(korch_configuration_packet_variables(c, "b", reads, 1, writes, 1) == KORCH_ERROR);
  CHECK(last().find("no team that applies action 'b': its actions are a") != std::string::npos);
  CHECK(korch_configuration_packet_variables(c, "a", negative, 1, writes, 1) == KORCH_ERROR);
  CHECK(last().find("numbered from 0") != std::string::npos);
  CHECK(korch_configuration_packet_variables(c, "a", nullptr, 0, nullptr, 0) == KORCH_ERROR);
  CHECK(korch_configuration_packet_variables(c, "a", reads, 1, writes, 1) == KORCH_OK);
  CHECK(korch_configuration_destroy(c) == KORCH_OK);
}

}  // namespace test_c_api_builtins
