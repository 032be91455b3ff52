// korch-info: prints korch's version, the Kokkos it runs on, enabled spaces and concurrency.
#include <korch/backend/backend_info.hpp>

#include <Kokkos_Core.hpp>

#include <exception>
#include <iostream>

int main(int argc, char* argv[]) {
  try {
    Kokkos::ScopeGuard kokkos(argc, argv);
    korch::print_backend_info(std::cout, korch::backend_info());
  } catch (const std::exception& e) {
    std::cerr << "korch-info: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
