// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-hydro: the compressible Euler solver, each step a bundle run by korch::Runtime.
//   korch-hydro --config split --threads 2 --blocks 4 --cells-per-block 64 --problem sedov --out out
//   mpirun -np 4 korch-hydro ...   (one Runtime per rank, each on the blocks it owns)
//   korch-hydro --max-level 3 ...  (an adaptive mesh: lib/run/amr_simulation.hpp)
// Options: lib/run/options.cpp (korch-hydro --help). Exit status 0 success, 1 failure, 2 usage error,
// 128 + N after signal N (SIGINT, SIGTERM) once the final checkpoint is written.
#include "amr_simulation.hpp"
#include "checkpoint.hpp"
#include "options.hpp"
#include "output_folders.hpp"
#include "plot_writer.hpp"
#include "rank_agreement.hpp"
#include "simulation.hpp"

#include <korch/backend/passive_openmp.hpp>
#include <korch/cli/program.hpp>
#include <korch/communicator.hpp>
#include <korch/error.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <exception>
#include <optional>
#include <string>

namespace {

// korch-hydro --max-level N: the adaptive mesh's run, picture and summary (rank 0 prints).
void run_adaptive(const korch::hydro::Options& options, const korch::Communicator& ranks) {
  korch::hydro::AmrSimulation sim(options, ranks);
  sim.run();
  sim.write_outputs();
  const std::string summary = sim.summary();
  if (ranks.rank() != 0) return;
  std::fputs(summary.c_str(), stdout);
  if (options.write_output) std::printf("picture: %s/density.png\n", options.out.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  // OpenMP (the conduction solve, --host-parallel) runs on the main thread between cycles.
  korch::prefer_passive_openmp_wait(argv);
  std::optional<korch::MpiSession> mpi;  // one rank when not started by mpirun (communicator.hpp)
  try {
    mpi.emplace(&argc, &argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "korch-hydro: %s\n", e.what());
    return 1;
  }
  const korch::Communicator ranks = korch::Communicator::world();
  korch::cli::Program program("korch-hydro",
                              "2D/3D compressible Euler solver (MUSCL-Hancock, HLLC); every step is a bundle of\n"
                              "actions run by korch::Runtime on the chosen configuration. Writes density.png,\n"
                              "timeline.png and trace.json.");
  korch::hydro::Options options;
  korch::hydro::add_options(program.app(), options);
  program.add_note(
      "Give --steps or --tmax, not both. --tile applies to host teams, --packet-blocks and\n"
      "--device-kernel to device teams. With --host-parallel set OMP_WAIT_POLICY=passive.");
  const auto parse_rc = program.parse(argc, argv);
  std::string refused = parse_rc ? "its command line does not parse (that rank printed why)" : "";
  if (!parse_rc) {
    try {
      korch::hydro::check_options(program.app(), options);  // before Kokkos starts or memory is taken
      // A checkpoint that cannot continue (damaged, of another run, --steps or --tmax reached) and
      // an output folder that cannot be written are refused here, before any output is touched.
      if (!options.restart.empty()) korch::hydro::check_checkpoint_file(options.restart, options);
      if (ranks.rank() == 0) korch::hydro::check_output_folders(options);
    } catch (const std::exception& e) {
      refused = e.what();
    }
  }
  // The first collective: ranks given different options stop here, all of them, before any other
  // collective could wait for a rank that runs another simulation.
  std::string disagreement;
  try {
    disagreement = korch::hydro::rank_disagreement(ranks, options, refused);
  } catch (const std::exception& e) {
    disagreement = e.what();
  }
  if (parse_rc) return *parse_rc;
  return program.run([&] {
    if (!refused.empty()) throw korch::cli::UsageError(refused);
    if (!disagreement.empty()) throw korch::cli::UsageError(disagreement);
    program.set_allocation_context(korch::hydro::grid_size(options).text());
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    const bool first = ranks.rank() == 0;
    if (!first) options.quiet = true;    // one progress bar, from rank 0
    korch::hydro::catch_stop_signals();  // SIGINT / SIGTERM: a final checkpoint, then exit 128 + signal
    try {
      if (options.max_level > 0) {
        run_adaptive(options, ranks);
        return 0;
      }
      korch::hydro::Simulation sim(options);
      sim.run();
      sim.write_outputs();
      const std::string summary = sim.summary();
      if (first) {
        std::fputs(summary.c_str(), stdout);
        std::printf("pictures: %s/density.png %s/timeline.png, trace: %s/trace.json\n", options.out.c_str(),
                    options.out.c_str(), options.out.c_str());
        if (options.plot.enabled())
          std::printf("plots: %s (ParaView, VisIt)\n",
                      korch::hydro::plot_series_path(options.plot, options.out).c_str());
      }
    } catch (const korch::hydro::Interrupted& e) {
      if (first) std::fprintf(stderr, "korch-hydro: %s\n", e.what());
      return 128 + e.signal;
    } catch (const std::exception& e) {
      if (ranks.size() == 1) throw;
      // The other ranks may be waiting for this one's messages: stop them all now.
      std::fprintf(stderr, "korch-hydro: rank %d of %d: %s\n", ranks.rank(), ranks.size(), e.what());
      std::fflush(stderr);
      ranks.abort(1);
    }
    return 0;
  });
}
