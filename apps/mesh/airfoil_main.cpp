// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-airfoil: OP2's airfoil benchmark on korch mesh loops. Reads a mesh in the format of
// shared/data/airfoil-162, runs it with the chosen executor and prints the rms of every iteration.
// Started by mpirun on several ranks, it partitions the mesh (docs/mesh.md, "Ranks") and runs the
// chosen executor (sequential by default there) on each rank's share, printing each iteration's
// time and halo bytes too.
//
//   korch-airfoil [--data DIR | --mesh FILE --constants FILE] [--executor NAME] [--iterations N]
//                 [--threads N] [--seed S] [--every N] [--dump LOOP]     (korch-airfoil --help)
//   executors: sequential, direct (colouring), direct-atomics, message, message-random
#include <korch/communicator.hpp>
#include <korch/error.hpp>
#include <korch/mesh.hpp>
#include "airfoil.hpp"
#include "airfoil_command_line.hpp"

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>

namespace {

namespace mesh = korch::mesh;
namespace af = korch::mesh::airfoil;

// The executor for --executor on the partition's ranks (sequential, the default there, is
// RankExecutor); `sync` is set to its halo refreshes.
std::unique_ptr<mesh::Executor> executor_on_ranks(const mesh::Partition& part, const af::AirfoilArgs& a,
                                                  mesh::RankSync*& sync) {
  if (!a.dump.empty())
    throw korch::cli::UsageError(
        fmt::format("--dump prints one rank's device graph: run it without mpirun ({} ranks)", part.size()));
  if (!a.executor_given || a.executor == "sequential") {
    auto ex = std::make_unique<mesh::RankExecutor>(part);
    sync = &ex->sync();
    return ex;
  }
  if (a.executor == "direct" || a.executor == "direct-atomics") {
    const mesh::IncMode mode = a.executor == "direct" ? mesh::IncMode::Colouring : mesh::IncMode::Atomics;
    auto ex = std::make_unique<mesh::DirectExecutor>(part, mesh::DirectOptions{mode});
    sync = ex->sync();
    return ex;
  }
  mesh::MessageOptions o;
  o.threads = a.threads;
  if (a.executor == "message-random") o.random_seed = a.seed;
  auto ex = std::make_unique<mesh::MessageExecutor>(part, o);
  sync = ex->sync();
  return ex;
}

// Iterations on the ranks of `world`: each printed line has the iteration's time (the slowest
// rank's), both rms and the halo bytes all ranks imported in that iteration.
int run_on_ranks(const korch::Communicator& world, const af::MeshData& m, af::Problem& problem,
                 const af::AirfoilArgs& a) {
  const mesh::Partition part(world, problem.cells, {problem.nodes, problem.edges, problem.bedges, problem.cells},
                             {problem.pedge, problem.pecell, problem.pbedge, problem.pbecell, problem.pcell});
  mesh::RankSync* sync = nullptr;
  const std::unique_ptr<mesh::Executor> ex = executor_on_ranks(part, a, sync);
  const bool print = world.rank() == 0;
  if (print) {
    fmt::print("airfoil: {} nodes, {} cells, {} edges, {} boundary edges; {} on {} ranks, {} partition\n", m.nnode,
               m.ncell, m.nedge, m.nbedge, ex->name(), world.size(), part.method());
    fmt::print("{:>6} {:>10} {:>14} {:>14} {:>12}\n", "iter", "time (ms)", "rms (k=0)", "rms (k=1)", "halo bytes");
  }
  double total = 0;
  for (int it = 1; it <= a.iterations; ++it) {
    const auto bytes0 = sync->counts().bytes_imported;
    const auto t0 = std::chrono::steady_clock::now();
    const auto rms = problem.iterate(*ex);
    const double s = -world.min(-std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    total += s;
    const auto bytes = world.sum(sync->counts().bytes_imported - bytes0);
    if (print && (it % a.every == 0 || it == a.iterations))
      fmt::print("{:>6} {:>10.3f} {:>14.5e} {:>14.5e} {:>12}\n", it, 1e3 * s, rms[0], rms[1], bytes);
  }
  if (print)
    fmt::print("{} iterations in {:.3f} s ({:.3f} ms per iteration)\n", a.iterations, total,
               1e3 * total / a.iterations);
  return 0;
}

int run(korch::mesh::airfoil::AirfoilArgs a) {
  std::string& mesh_file = a.mesh_file;
  std::string& constants_file = a.constants_file;
  const std::string& dir = a.dir;
  const std::string& executor = a.executor;
  const std::string& dump = a.dump;
  const int iterations = a.iterations, every = a.every;
  const unsigned threads = a.threads;
  if (mesh_file.empty()) mesh_file = dir + "/mesh.dat";
  if (constants_file.empty()) constants_file = dir + "/constants.txt";

  const af::MeshData m = af::read_mesh(mesh_file);
  af::Problem problem(m, af::read_constants(constants_file));
  const korch::Communicator world = korch::Communicator::world();
  if (world.size() > 1) return run_on_ranks(world, m, problem, a);

  std::unique_ptr<mesh::Executor> ex;
  mesh::MessageExecutor* md = nullptr;
  if (executor == "sequential")
    ex = std::make_unique<mesh::SequentialExecutor>();
  else if (executor == "direct")
    ex = std::make_unique<mesh::DirectExecutor>();
  else if (executor == "direct-atomics")
    ex = std::make_unique<mesh::DirectExecutor>(mesh::DirectOptions{mesh::IncMode::Atomics});
  else if (executor == "message" || executor == "message-random") {
    mesh::MessageOptions o;
    o.threads = threads;
    if (executor == "message-random") o.random_seed = a.seed;
    auto p = std::make_unique<mesh::MessageExecutor>(o);
    md = p.get();
    ex = std::move(p);
  } else {
    throw korch::Error::format("unknown executor '{}'", executor);  // add_options lists them
  }

  if (!dump.empty()) {
    mesh::MessageExecutor local;
    for (mesh::ParLoopBase* loop : problem.loops())
      if (loop->name() == dump) {
        std::fputs((md ? *md : local).dump(*loop, 8).c_str(), stdout);
        return 0;
      }
    throw korch::Error::format("--dump: no loop named '{}' (save_soln, adt_calc, res_calc, bres_calc, update)", dump);
  }

  fmt::print("airfoil: {} nodes, {} cells, {} edges, {} boundary edges; executor {}\n", m.nnode, m.ncell, m.nedge,
             m.nbedge, ex->name());
  fmt::print("{:>6} {:>14} {:>14}\n", "iter", "rms (k=0)", "rms (k=1)");
  const auto t0 = std::chrono::steady_clock::now();
  for (int it = 1; it <= iterations; ++it) {
    const auto rms = problem.iterate(*ex);
    if (it % every == 0 || it == iterations) fmt::print("{:>6} {:>14.5e} {:>14.5e}\n", it, rms[0], rms[1]);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  fmt::print("{} iterations in {:.3f} s ({:.3f} ms per iteration)\n", iterations, s, 1e3 * s / iterations);
  if (md) {
    const auto& c = md->total_counts();
    fmt::print(
        "messages: {} delivered ({:.0f} per iteration): begin {}, read_recv {}, write_recv {}, end {}; "
        "read_send {}, write_send {}, execute {}, early arrivals {}\n",
        c.delivered(), static_cast<double>(c.delivered()) / iterations, c.begin, c.read_recv, c.write_recv, c.end,
        c.read_send, c.write_send, c.execute, c.early);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<korch::MpiSession> mpi;  // one rank when not started by mpirun (communicator.hpp)
  try {
    mpi.emplace(&argc, &argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "korch-airfoil: %s\n", e.what());
    return 1;
  }
  korch::mesh::airfoil::AirfoilArgs args;
  const auto program = korch::mesh::airfoil::airfoil_command_line(args);
  if (auto rc = program->parse(argc, argv)) return *rc;
  args.executor_given = program->app().count("--executor") > 0;
  return program->run([&] {
    Kokkos::ScopeGuard kokkos(program->kokkos_argc(), program->kokkos_argv());
    return run(args);
  });
}
