// doctest main for every suite: Kokkos is initialized once around the whole run.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  int result = 0;
  {
    doctest::Context context(argc, argv);
    result = context.run();
  }
  Kokkos::finalize();
  return result;
}
