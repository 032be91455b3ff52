// korch-info: prints korch's version, the Kokkos it runs on, enabled spaces and concurrency.
// Takes no options besides --help and --kokkos-* (e.g. --kokkos-threads=4 changes the concurrency).
#include <korch/backend/backend_info.hpp>
#include <korch/cli/program.hpp>

#include <Kokkos_Core.hpp>

#include <iostream>

int main(int argc, char* argv[]) {
  korch::cli::Program program("korch-info",
                              "prints korch's version, the Kokkos it runs on, its enabled execution spaces\n"
                              "and their concurrency.");
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    korch::print_backend_info(std::cout, korch::backend_info());
    return 0;
  });
}
