// A tiny "physics code" that uses an installed korch: it initializes Kokkos through korch's
// dependency, checks the backend it was handed, and runs a reduction on the default space.
#include <korch/backend/backend_info.hpp>
#include <korch/backend/spaces.hpp>
#include <korch/config.hpp>
#include <korch/error.hpp>

#include <Kokkos_Core.hpp>

#include <cstdio>
#include <exception>

int main(int argc, char* argv[]) {
  try {
    Kokkos::ScopeGuard kokkos(argc, argv);
    const auto info = korch::backend_info();
    if (info.backend != KORCH_BACKEND_NAME) {
      throw korch::Error::format("embed: installed library reports backend '{}' but its headers say '{}'",
                                 info.backend, KORCH_BACKEND_NAME);
    }
    const int n = 1000;
    double sum = 0;
    Kokkos::parallel_reduce(
        "embed.sum", Kokkos::RangePolicy<korch::DeviceExecSpace>(0, n),
        KOKKOS_LAMBDA(int i, double& s) { s += i; }, sum);
    if (sum != n * (n - 1) / 2.0) throw korch::Error::format("embed: sum is {}, expected {}", sum, n * (n - 1) / 2.0);
    std::printf("embed: korch %s on %s (Kokkos %s): ok\n", info.korch_version.c_str(), info.backend.c_str(),
                info.kokkos_version.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embed: %s\n", e.what());
    return 1;
  }
  return 0;
}
