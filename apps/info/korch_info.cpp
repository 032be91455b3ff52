// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-info: prints korch's version, the Kokkos it runs on, enabled spaces and concurrency, and the
// layout a default korch::Runtime takes on this machine (docs/runtime-sizing.md).
// Takes no options besides --help and --kokkos-* (e.g. --kokkos-threads=4 changes the concurrency).
#include <korch/backend/backend_info.hpp>
#include <korch/cli/program.hpp>
#include <korch/runtime.hpp>
#include <korch/runtime_sizing.hpp>

#include <Kokkos_Core.hpp>

#include <iostream>

namespace {

// The cores seen, the ranks sharing them and the teams a default Runtime would have.
void print_runtime_layout(std::ostream& out) {
  const korch::MachineShare share = korch::machine_share();
  const korch::RuntimeOptions o = korch::sized_options({}, share);
  out << "cores seen:              " << share.cores << " (affinity mask; " << share.node_cores << " online on this node"
      << (share.bound() ? ", bound by the launcher" : "") << ")\n"
      << "ranks on node:           " << share.ranks_on_node << " (" << share.ranks_from << ")\n"
      << "cores for this rank:     " << share.cores_per_rank() << '\n'
      << "runtime teams:           " << o.n_teams << " x " << o.threads_per_team << " threads\n"
      << "runtime helper teams:    " << o.n_helpers << " x " << o.helper_threads << " threads\n"
      << "                         (a team starts its threads when a cycle first uses it)\n";
}

}  // namespace

int main(int argc, char* argv[]) {
  korch::cli::Program program("korch-info",
                              "prints korch's version, the Kokkos it runs on, its enabled execution spaces\n"
                              "and their concurrency, and the teams and threads of a default korch::Runtime\n"
                              "on this machine (cores in the affinity mask shared by the ranks on the node).");
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    korch::print_backend_info(std::cout, korch::backend_info());
    print_runtime_layout(std::cout);
    return 0;
  });
}
