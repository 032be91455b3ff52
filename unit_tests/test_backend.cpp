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

TEST_CASE("Team threads always have Kokkos::Serial for host work") {
  const auto info = korch::backend_info();
  CHECK(contains(info.execution_spaces, "Serial"));
  CHECK(contains(info.memory_spaces, "HostSpace"));
  CHECK(std::string(korch::HostTaskSpace::name()) == "Serial");
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
