// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A small physics code that embeds an installed korch: it owns a 2-D periodic heat problem on
// blocks of several widths (its own Kokkos Views, its own layout u(i, j, var)), spread over the MPI
// ranks it was started with (one process, or mpirun -np 2), and runs each step as a bundle on
// korch's runtime over its blocks (korch::BlockList) with several configurations. It describes
// which block lies next to which (korch::NeighbourList) and korch fills the guard cells inside each
// cycle, handing out every block as soon as its guard cells are valid (korch::GuardCellIterator),
// on the code's own communicator. Every run must equal the plain loop over one global array
// bitwise: both apply the same expression to the same values in each cell, and korch builds
// without floating-point contraction (docs/floating-point.md).
#include <korch/korch.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

constexpr int ny = 24, steps = 20;
constexpr double nu = 0.2;                        // diffusion number (stable below 0.25)
const std::vector<int> widths = {16, 24, 8, 12};  // the blocks' interior widths in x

// The code's own mesh: blocks side by side in x, periodic in x and y; this rank's blocks are those
// with global * ranks / n == rank. One View u(i, j, var) per block, 1 guard cell, var 0 and 1
// alternate as old and new temperature.
using BlockStorage = Kokkos::View<double****, Kokkos::LayoutLeft, Kokkos::HostSpace>;
struct Mesh {
  explicit Mesh(const korch::Communicator& comm) : comm(comm) {
    for (int g = 0; g < n(); ++g) {
      if (owner(g) == comm.rank()) {
        u.emplace_back("heat block", widths[static_cast<std::size_t>(g)] + 2, ny + 2, 1, 2);
        global.push_back(g);
        x0.push_back(nx_total);
      }
      nx_total += widths[static_cast<std::size_t>(g)];
    }
  }
  static int n() { return static_cast<int>(widths.size()); }
  int owner(int g) const { return g * comm.size() / n(); }
  int width(std::size_t b) const { return widths[static_cast<std::size_t>(global[b])]; }
  static double initial(int gi, int j) { return (gi * 7 + j * 3) % 11 == 0 ? 1.0 : 0.1 * ((gi + 2 * j) % 5); }
  void fill() {
    for (std::size_t b = 0; b < u.size(); ++b)
      for (int i = 1; i <= width(b); ++i)
        for (int j = 1; j <= ny; ++j) u[b](i, j, 0, 0) = initial(x0[b] + i - 1, j - 1);
  }
  korch::BlockList blocks() const {
    korch::BlockList list("heat", 2);
    for (std::size_t b = 0; b < u.size(); ++b) {
      korch::BlockShape s;
      s.cells = {width(b), ny, 1};
      s.guard = {1, 1, 0};
      s.tile_cells = {8, 8, 0};
      s.global_id = global[b];
      list.add(s, korch::BlockArray::of(u[b], korch::IndexOrder::i_j_k_var));
    }
    return list;
  }
  // Periodic in x over the blocks, and in y within one row of blocks: whatever lies in direction
  // (dx, dy) is block global + dx, wrapped.
  korch::NeighbourList neighbours() const {
    korch::NeighbourList near(2);
    for (std::size_t b = 0; b < u.size(); ++b)
      for (const auto& d : korch::NeighbourList::directions(2)) {
        const int g = (global[b] + d[0] + n()) % n();
        near.set(static_cast<int>(b), d, korch::Neighbour::block(g, owner(g)));
      }
    return near;
  }
  const korch::Communicator& comm;
  std::vector<BlockStorage> u;
  std::vector<int> global, x0;
  int nx_total = 0;
};

// The update of one cell from its old value and its west, east, south and north neighbours, shared
// by the action on tiles and packets and by the plain loop.
KOKKOS_INLINE_FUNCTION double heat(double c, double w, double e, double s, double n) {
  return c + nu * (w + e + s + n - 4.0 * c);
}

// The heat update of `out` from `in` over [lo, hi) of a box (block-local indices, guard cells
// counted) on the box's execution space: a host thread's for a tile, the backend's device for a
// packet entry. A named function template, not a generic lambda: CUDA builds its kernel only so.
template <class Space, class In, class Out>
void heat_box(const Space& space, In in, Out out, const int lo[3], const int hi[3]) {
  Kokkos::parallel_for(
      "embed heat", Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>(space, {lo[0], lo[1]}, {hi[0], hi[1]}),
      KOKKOS_LAMBDA(int i, int j) {
        out(i, j, 0) = heat(in(i, j, 0), in(i - 1, j, 0), in(i + 1, j, 0), in(i, j - 1, 0), in(i, j + 1, 0));
      });
}

// Action "A": variable `to` from variable `from` on every box korch hands out (tiles of the code's
// own blocks, or entries of packets), reading one guard cell on each side.
korch::TypedAction heat_step(int from, int to) {
  return std::move(korch::TypedAction("A")
                       .on_box([from, to](const korch::ActionContext&, const auto& box) {
                         heat_box(box.space(), box.var(from), box.var(to), box.lo(), box.hi());
                       })
                       .reads_guard_cells(1));
}

// The same steps as one plain loop over a global periodic array.
std::vector<double> plain_loop(int nx) {
  std::vector<double> a(static_cast<std::size_t>(nx * ny)), b(a.size());
  for (int gi = 0; gi < nx; ++gi)
    for (int j = 0; j < ny; ++j) a[static_cast<std::size_t>(gi + nx * j)] = Mesh::initial(gi, j);
  for (int s = 0; s < steps; ++s) {
    auto old = [&](int i, int j) { return a[static_cast<std::size_t>((i + nx) % nx + nx * ((j + ny) % ny))]; };
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i)
        b[static_cast<std::size_t>(i + nx * j)] =
            heat(old(i, j), old(i - 1, j), old(i + 1, j), old(i, j - 1), old(i, j + 1));
    std::swap(a, b);
  }
  return a;
}

// Runs the steps on `configuration`; returns the largest difference from the plain loop over every
// rank's blocks.
double run(korch::Runtime& runtime, korch::Configuration configuration, const korch::Communicator& comm,
           const std::vector<double>& expected) {
  Mesh mesh(comm);
  mesh.fill();
  auto blocks = mesh.blocks();
  korch::GuardCellExchange exchange(blocks, mesh.neighbours(), comm);  // collective
  korch::GuardCellIterator when_ready(exchange, 0, 1);
  for (int s = 0; s < steps; ++s) {
    const int from = s % 2, to = 1 - from;
    for (auto& h : configuration.helpers) h.variables = korch::PacketVariables{{from}, {}, {to}, 0};
    when_ready.set_variables(from, 1);
    korch::Bundle bundle("heat step");
    bundle.add(heat_step(from, to));
    runtime.execute(bundle, configuration, blocks, &when_ready);
  }
  double diff = 0;
  const int v = steps % 2;
  for (std::size_t b = 0; b < mesh.u.size(); ++b)
    for (int i = 1; i <= mesh.width(b); ++i)
      for (int j = 1; j <= ny; ++j)
        diff =
            std::max(diff, std::abs(mesh.u[b](i, j, 0, v) -
                                    expected[static_cast<std::size_t>(mesh.x0[b] + i - 1 + mesh.nx_total * (j - 1))]));
  return -comm.min(-diff);
}

// The code's ranks: MPI_COMM_WORLD when a launcher started it (MPI initialized here), else this
// process alone.
struct Ranks {
  Ranks(int* argc, char*** argv) {
#if KORCH_HAVE_MPI
    if (korch::MpiSession::launched_by_mpi()) {
      int provided = 0;
      MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
      mpi = true;
      comm = korch::communicator_of(MPI_COMM_WORLD);
    }
#else
    (void)argc;
    (void)argv;
#endif
  }
  ~Ranks() {
#if KORCH_HAVE_MPI
    if (mpi) MPI_Finalize();
#endif
  }
  bool mpi = false;
  korch::Communicator comm = korch::Communicator::world();
};

}  // namespace

int main(int argc, char* argv[]) {
  Ranks ranks(&argc, &argv);
  try {
    Kokkos::ScopeGuard kokkos(argc, argv);
    const auto info = korch::backend_info();
    if (info.backend != KORCH_BACKEND_NAME) {
      throw korch::Error::format("embed: installed library reports backend '{}' but its headers say '{}'", info.backend,
                                 KORCH_BACKEND_NAME);
    }
    const auto expected = plain_loop(Mesh(ranks.comm).nx_total);
    korch::Runtime runtime;
    const std::string two_host_teams = R"({"name": "two_host_teams",
      "teams": [ {"name": "left", "type": "tile", "action": "A", "threads": 2},
                 {"name": "right", "type": "tile", "action": "A", "threads": 2} ],
      "distributor": {"kind": "data_parallel", "groups": [ {"pipelines": ["left", "right"], "policy": "dynamic"} ]}})";
    const std::vector<std::pair<std::string, korch::Configuration>> configurations = {
        {"cpu_only", korch::configurations::get("cpu_only")},
        {"gpu_only", korch::configurations::get("gpu_only")},
        {"cpu_gpu_data_parallel", korch::configurations::get("cpu_gpu_data_parallel")},
        {"two_host_teams (JSON)", korch::Configuration::from_json(two_host_teams)}};
    for (const auto& [name, configuration] : configurations) {
      const double diff = run(runtime, configuration, ranks.comm, expected);
      if (ranks.comm.rank() == 0)
        std::printf(
            "embed: %d heat steps on %zu blocks of widths 16/24/8/12 x %d on %d rank(s), %s: max |korch - plain "
            "loop| = %g\n",
            steps, widths.size(), ny, ranks.comm.size(), name.c_str(), diff);
      if (diff != 0.0)
        throw korch::Error::format("embed: configuration {} differs from the plain loop by {}", name, diff);
    }
    if (ranks.comm.rank() == 0)
      std::printf("embed: korch %s on %s (Kokkos %s): ok\n", info.korch_version.c_str(), info.backend.c_str(),
                  info.kokkos_version.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embed: rank %d of %d: %s\n", ranks.comm.rank(), ranks.comm.size(), e.what());
    if (ranks.comm.size() > 1) ranks.comm.abort(1);  // the other ranks may wait for this one's messages
    return 1;
  }
  return 0;
}
