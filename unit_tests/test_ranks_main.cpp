// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// doctest main of the ranks suite: MPI (when built with it) and Kokkos around the whole run, so the
// same cases run as one process and under mpirun; every rank runs every case. A crash prints its
// call stack (test_crash_report.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "test_crash_report.hpp"

#include <korch/communicator.hpp>

#include <Kokkos_Core.hpp>

REGISTER_LISTENER("crash report", 2, korch::test::CrashReport);

int main(int argc, char** argv) {
  korch::MpiSession mpi(&argc, &argv);
  Kokkos::initialize(argc, argv);
  int result = 0;
  {
    doctest::Context context(argc, argv);
    result = context.run();
  }
  Kokkos::finalize();
  // A rank whose cases failed must fail the whole run, also when another rank's did not.
  const auto world = korch::Communicator::world();
  return world.sum(result != 0 ? 1 : 0) > 0 ? 1 : 0;
}
