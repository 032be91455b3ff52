// The one place that knows how Kokkos 3.4 and Kokkos 4.x differ in the APIs korch uses.
// Everything else in korch calls these shims instead of testing KOKKOS_VERSION itself.
#pragma once

#include <Kokkos_Core.hpp>

#include <string>

namespace korch::compat {

// KOKKOS_VERSION is major*10000 + minor*100 + patch in both 3.x and 4.x.
inline constexpr int kokkos_version_major = KOKKOS_VERSION / 10000;
inline constexpr int kokkos_version_minor = (KOKKOS_VERSION / 100) % 100;
inline constexpr int kokkos_version_patch = KOKKOS_VERSION % 100;

inline std::string kokkos_version_string() {
  return std::to_string(kokkos_version_major) + "." + std::to_string(kokkos_version_minor) + "." +
         (kokkos_version_patch < 10 ? "0" : "") + std::to_string(kokkos_version_patch);
}

// Kokkos 3.4 declares concurrency() static on most spaces; 4.x makes it a member function.
// Calling it on an instance compiles in both.
template <class ExecSpace>
int concurrency(const ExecSpace& space = ExecSpace()) {
  return static_cast<int>(space.concurrency());
}

// Kokkos::is_initialized() exists in both; 4.x adds is_finalized(), 3.4 does not.
inline bool is_initialized() { return Kokkos::is_initialized(); }

}  // namespace korch::compat
