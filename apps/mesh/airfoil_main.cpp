// korch-airfoil: OP2's airfoil benchmark on korch mesh loops. Reads a mesh in the format of
// shared/data/airfoil-162, runs it with the chosen executor and prints the rms of every iteration.
//
//   korch-airfoil [--data DIR | --mesh FILE --constants FILE] [--executor NAME] [--iterations N]
//                 [--threads N] [--seed S] [--every N] [--dump LOOP]
//   executors: sequential, direct (colouring), direct-atomics, message, message-random
#include <korch/error.hpp>
#include <korch/mesh.hpp>
#include <korch/mesh/airfoil.hpp>

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace {

const char* usage =
    "usage: korch-airfoil [--data DIR | --mesh FILE --constants FILE] [--executor sequential|direct|direct-atomics|"
    "message|message-random]\n"
    "                     [--iterations N] [--threads N] [--seed S] [--every N] [--dump LOOP]\n"
    "  DIR holds mesh.dat and constants.txt (default: apps/mesh/data/airfoil-162).\n"
    "  Prints the rms of both steps of every N-th iteration (default every iteration).\n"
    "  --dump LOOP prints the message-driven device graph of save_soln, adt_calc, res_calc, bres_calc or update.\n";

int run(int argc, char** argv) {
  namespace mesh = korch::mesh;
  namespace af = korch::mesh::airfoil;
  std::string dir = std::string(KORCH_MESH_DATA_DIR) + "/airfoil-162";
  std::string mesh_file, constants_file, executor = "direct", dump;
  int iterations = 4, every = 1;
  unsigned threads = 2;
  long long seed = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw korch::Error::format("option {} needs a value\n{}", a, usage);
      return argv[++i];
    };
    if (a == "--data") dir = value();
    else if (a == "--mesh") mesh_file = value();
    else if (a == "--constants") constants_file = value();
    else if (a == "--executor") executor = value();
    else if (a == "--iterations") iterations = std::stoi(value());
    else if (a == "--threads") threads = static_cast<unsigned>(std::stoul(value()));
    else if (a == "--seed") seed = std::stoll(value());
    else if (a == "--every") every = std::max(1, std::stoi(value()));
    else if (a == "--dump") dump = value();
    else if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return 0;
    } else if (a.rfind("--kokkos", 0) == 0) continue;
    else throw korch::Error::format("unknown option '{}'\n{}", a, usage);
  }
  if (mesh_file.empty()) mesh_file = dir + "/mesh.dat";
  if (constants_file.empty()) constants_file = dir + "/constants.txt";

  const af::MeshData m = af::read_mesh(mesh_file);
  af::Problem problem(m, af::read_constants(constants_file));

  std::unique_ptr<mesh::Executor> ex;
  mesh::MessageExecutor* md = nullptr;
  if (executor == "sequential") ex = std::make_unique<mesh::SequentialExecutor>();
  else if (executor == "direct") ex = std::make_unique<mesh::DirectExecutor>();
  else if (executor == "direct-atomics") ex = std::make_unique<mesh::DirectExecutor>(mesh::DirectOptions{mesh::IncMode::Atomics});
  else if (executor == "message" || executor == "message-random") {
    mesh::MessageOptions o;
    o.threads = threads;
    if (executor == "message-random") o.random_seed = seed < 0 ? 1 : static_cast<std::uint64_t>(seed);
    auto p = std::make_unique<mesh::MessageExecutor>(o);
    md = p.get();
    ex = std::move(p);
  } else {
    throw korch::Error::format("unknown executor '{}'\n{}", executor, usage);
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
    fmt::print("messages: {} delivered ({:.0f} per iteration): begin {}, read_recv {}, write_recv {}, end {}; "
               "read_send {}, write_send {}, execute {}, early arrivals {}\n",
               c.delivered(), static_cast<double>(c.delivered()) / iterations, c.begin, c.read_recv, c.write_recv, c.end,
               c.read_send, c.write_send, c.execute, c.early);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  int rc = 0;
  try {
    rc = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "korch-airfoil: %s\n", e.what());
    rc = 1;
  }
  Kokkos::finalize();
  return rc;
}
