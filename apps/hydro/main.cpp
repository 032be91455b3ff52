// korch-hydro: the compressible Euler solver of issue 5, each step a bundle run by korch::Runtime.
//   korch-hydro --config split --threads 2 --blocks 4 --cells-per-block 64 --problem sedov --out out
#include "simulation.hpp"

#include <korch/error.hpp>
#include <korch/backend/passive_openmp.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  // OpenMP (the conduction solve, --host-parallel) runs on the main thread between cycles.
  korch::prefer_passive_openmp_wait(argv);
  std::vector<std::string> args(argv + 1, argv + argc);
  bool help = false;
  korch::hydro::Options options;
  try {
    options = korch::hydro::parse_options(args, &help);
  } catch (const korch::Error& e) {
    std::fprintf(stderr, "korch-hydro: %s\n", e.what());
    return 2;
  }
  if (help) {
    std::fputs(korch::hydro::usage().c_str(), stdout);
    return 0;
  }
  int argc_kokkos = 1;
  Kokkos::ScopeGuard kokkos(argc_kokkos, argv);
  try {
    korch::hydro::Simulation sim(options);
    sim.run();
    sim.write_outputs();
    std::fputs(sim.summary().c_str(), stdout);
    std::printf("pictures: %s/density.png %s/timeline.png, trace: %s/trace.json\n", options.out.c_str(),
                options.out.c_str(), options.out.c_str());
  } catch (const korch::Error& e) {
    std::fprintf(stderr, "korch-hydro: %s\n", e.what());
    return 1;
  }
  return 0;
}
