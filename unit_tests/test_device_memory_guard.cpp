// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The device memory guard's probe (device_memory_guard.cpp): a host read of device memory outside
// a kernel or copy must fault under the guard, naming the allocation. Skipped in normal runs, where
// the read works on a host build; ctest runs it alone under the guard (unit_tests/CMakeLists.txt)
// and expects the guard's report.
#include <korch/backend/spaces.hpp>

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>

TEST_CASE("Device memory guard: a host read of device memory outside a kernel faults" * doctest::skip()) {
  Kokkos::View<double*, korch::DeviceMemSpace> probe("guard probe (device)", 4096);  // 8 pages
  Kokkos::deep_copy(probe, 1.0);
  const double* data = probe.data();
  // What a GPU build would crash on: the host reading device memory directly.
  const volatile double value = data[2048];
  CHECK(value == 1.0);
}
