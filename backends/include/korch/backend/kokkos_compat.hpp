// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one place that knows how Kokkos 3.4, 4.x and 5.x differ in the APIs korch uses.
// Everything else in korch calls these shims instead of testing KOKKOS_VERSION itself.
#pragma once

#include <Kokkos_Core.hpp>

#include <mutex>
#include <optional>
#include <string>

namespace korch::compat {

// KOKKOS_VERSION is major*10000 + minor*100 + patch in 3.x, 4.x and 5.x.
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

// HIP left the Experimental namespace in Kokkos 4.0.
#if defined(KOKKOS_ENABLE_HIP)
#if KOKKOS_VERSION >= 40000
using HIP = Kokkos::HIP;
using HIPSpace = Kokkos::HIPSpace;
using HIPHostPinnedSpace = Kokkos::HIPHostPinnedSpace;
#else
using HIP = Kokkos::Experimental::HIP;
using HIPSpace = Kokkos::Experimental::HIPSpace;
using HIPHostPinnedSpace = Kokkos::Experimental::HIPHostPinnedSpace;
#endif
#endif

// ---- Execution-space instances for team threads (see thread_spaces.hpp) ----

// The space each team thread runs its own host work on, one thread wide and private to it. Kokkos::Serial
// wherever Kokkos has it. A Kokkos 4 or 5 built with OpenMP alone (Debian's libkokkos-dev is one) gets
// one-thread Kokkos::OpenMP instances instead: since Kokkos 4 an OpenMP instance made with a pool size
// has its own pool and buffers and may be dispatched to from any thread (docs/backends.md).
#if defined(KOKKOS_ENABLE_SERIAL)
using SerialHostSpace = Kokkos::Serial;
inline constexpr bool serial_host_space_is_serial = true;
#elif defined(KOKKOS_ENABLE_OPENMP) && KOKKOS_VERSION >= 40000
using SerialHostSpace = Kokkos::OpenMP;
inline constexpr bool serial_host_space_is_serial = false;
#else
#error "korch needs Kokkos::Serial, or Kokkos 4 or newer with OpenMP, for its team threads' host work"
#endif

// Kokkos 4 can make a Kokkos::Serial instance with its own internal state (Serial(NewInstance)).
// Kokkos 3.4 has one: every Kokkos::Serial object shares one global scratch/reduction buffer.
inline constexpr bool serial_instances_are_independent = KOKKOS_VERSION >= 40000;

// A new instance of SerialHostSpace with its own state (on Kokkos 3.4, the shared Serial one).
inline SerialHostSpace make_serial_instance() {
#if !defined(KOKKOS_ENABLE_SERIAL)
  return Kokkos::OpenMP(1);
#elif KOKKOS_VERSION >= 40000
  return Kokkos::Serial(Kokkos::NewInstance{});
#else
  return Kokkos::Serial();
#endif
}

// A SerialHostSpace instance for work the calling thread does on its own outside the teams (the
// hydro app's work between cycles): Serial's default instance, or a single one-thread OpenMP
// instance shared by all callers and kept until Kokkos::finalize. Not the backend's full OpenMP
// pool: after a parallel region libgomp's workers spin on the cores the team threads need.
inline SerialHostSpace calling_thread_instance() {
#if defined(KOKKOS_ENABLE_SERIAL)
  return Kokkos::Serial();
#else
  static std::mutex guard;
  static std::optional<Kokkos::OpenMP> kept;
  std::lock_guard<std::mutex> lock(guard);
  if (!kept) {
    kept.emplace(1);
    Kokkos::push_finalize_hook([] {
      std::lock_guard<std::mutex> release(guard);
      kept.reset();
    });
  }
  return *kept;
#endif
}

#if defined(KOKKOS_ENABLE_CUDA)
// Kokkos::Cuda(cudaStream_t) wraps a stream it does not own in 3.4 and in 4.x.
inline Kokkos::Cuda make_stream_instance(cudaStream_t stream) { return Kokkos::Cuda(stream); }
#endif

#if defined(KOKKOS_ENABLE_HIP)
// HIP(hipStream_t) likewise wraps a stream it does not own (compat::HIP names the space above).
inline HIP make_stream_instance(hipStream_t stream) { return HIP(stream); }
#endif

}  // namespace korch::compat
