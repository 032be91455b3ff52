// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/backend/backend_info.hpp>
#include <korch/backend/kokkos_compat.hpp>
#include <korch/backend/spaces.hpp>
#include <korch/config.hpp>
#include <korch/error.hpp>

#include <doctest/doctest.h>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

namespace {
bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}
// The Kokkos execution space that each korch backend must run its device work on.
std::string expected_default_space(const std::string& backend) {
  if (backend == "serial") return "Serial";
  if (backend == "openmp") return "OpenMP";
  if (backend == "threads") return "Threads";
  if (backend == "cuda") return "Cuda";
  if (backend == "hip") return "HIP";
  return "?";
}
}  // namespace

TEST_CASE("The library records the backend it was configured for, and Kokkos agrees") {
  const auto info = korch::backend_info();
  CHECK(info.backend == KORCH_BACKEND_NAME);
  CHECK(info.device_execution_space == expected_default_space(info.backend));
  CHECK(std::string(korch::DeviceExecSpace::name()) == expected_default_space(info.backend));
  CHECK(contains(info.execution_spaces, expected_default_space(info.backend)));
}

TEST_CASE("Team threads have a one-thread host space: Serial where Kokkos has it, else one-thread OpenMP") {
  const auto info = korch::backend_info();
  CHECK(contains(info.memory_spaces, "HostSpace"));
  const auto space = korch::compat::make_serial_instance();
  CHECK(space.concurrency() == 1);
  CHECK(info.team_host_space.rfind(korch::HostTaskSpace::name(), 0) == 0);
  if (contains(info.execution_spaces, "Serial")) {
    CHECK(std::string(korch::HostTaskSpace::name()) == "Serial");
  } else {
    CHECK(korch::compat::kokkos_version_major >= 4);
    CHECK(std::string(korch::HostTaskSpace::name()) == "OpenMP");
  }
  // Each instance is the calling thread's own: a reduction on it from two threads at once gives both
  // their own sums (one pool and one reduction buffer per instance; Kokkos 3.4's Serial shares one).
  if (!korch::compat::serial_instances_are_independent) return;
  long sums[2] = {0, 0};
  std::thread other([&] {
    const auto mine = korch::compat::make_serial_instance();
    for (int r = 0; r < 200; ++r) {
      long s = 0;
      Kokkos::parallel_reduce(
          "test.mine", Kokkos::RangePolicy<korch::HostTaskSpace>(mine, 0, 1000), [](int i, long& x) { x += i; }, s);
      sums[1] += s;
    }
  });
  for (int r = 0; r < 200; ++r) {
    long s = 0;
    Kokkos::parallel_reduce(
        "test.mine", Kokkos::RangePolicy<korch::HostTaskSpace>(space, 0, 2000), [](int i, long& x) { x += i; }, s);
    sums[0] += s;
  }
  other.join();
  CHECK(sums[0] == 200L * 1999 * 1000);
  CHECK(sums[1] == 200L * 999 * 500);
}

TEST_CASE("Kokkos version shim decodes KOKKOS_VERSION") {
  CHECK(korch::compat::kokkos_version_major * 10000 + korch::compat::kokkos_version_minor * 100 +
            korch::compat::kokkos_version_patch ==
        KOKKOS_VERSION);
  CHECK(korch::compat::kokkos_version_major >= 3);
  const auto text = korch::compat::kokkos_version_string();
  CHECK(text.find('.') != std::string::npos);
  if (KOKKOS_VERSION == 30401) CHECK(text == "3.4.01");
}

TEST_CASE("Concurrency is reported once Kokkos is initialized") {
  const auto info = korch::backend_info();
  CHECK(info.concurrency >= 1);
  CHECK(info.concurrency == korch::compat::concurrency<korch::DeviceExecSpace>());
}

TEST_CASE("korch-info output names version, backend, spaces and concurrency") {
  std::ostringstream out;
  korch::print_backend_info(out, korch::backend_info());
  const auto text = out.str();
  CHECK(text.find(std::string("korch version:           ") + KORCH_VERSION_STRING) != std::string::npos);
  CHECK(text.find(std::string("korch backend:           ") + KORCH_BACKEND_NAME) != std::string::npos);
  CHECK(text.find("Kokkos version:") != std::string::npos);
  CHECK(text.find("execution spaces:        ") != std::string::npos);
  CHECK(text.find("concurrency:") != std::string::npos);
  CHECK(text.find("team host space:         " + korch::backend_info().team_host_space) != std::string::npos);
}

TEST_CASE("The default space runs a reduction and HostTaskSpace runs a loop") {
  const int n = 10000;
  long sum = 0;
  Kokkos::parallel_reduce(
      "test.sum", Kokkos::RangePolicy<korch::DeviceExecSpace>(0, n), KOKKOS_LAMBDA(int i, long& s) { s += i; }, sum);
  CHECK(sum == long(n) * (n - 1) / 2);

  Kokkos::View<int*, Kokkos::HostSpace> v("v", n);
  Kokkos::parallel_for("test.fill", Kokkos::RangePolicy<korch::HostTaskSpace>(0, n), [=](int i) { v(i) = 2 * i; });
  korch::HostTaskSpace().fence();
  CHECK(v(n - 1) == 2 * (n - 1));
}

TEST_CASE("korch::Error formats its message and is a std::runtime_error") {
  const auto e = korch::Error::format("team '{}' is {}: {}", "cpu", "RunningOpen", "call wait() first");
  CHECK(std::string(e.what()) == "team 'cpu' is RunningOpen: call wait() first");
  CHECK_THROWS_AS(throw e, std::runtime_error);
  CHECK_THROWS_WITH_AS(throw korch::Error("plain"), "plain", korch::Error);
}
