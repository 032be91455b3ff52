// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Kokkos execution-space instances one thread of a thread team owns for its whole life.
//
// Every team thread gets
//   host():   a Kokkos::Serial instance for the per-item host work the thread does itself (a
//             one-thread Kokkos::OpenMP instance where Kokkos has no Serial, see kokkos_compat.hpp), and
//   device(): on CUDA/HIP builds an instance on a stream that belongs to this thread alone, so that
//             the kernels and copies of different team threads overlap; on host-only builds the
//             "device" is the thread's Serial instance again (device data is still a distinct
//             allocation, see spaces.hpp, but it is computed on by the thread itself).
//
// Why Serial and not the backend's parallel host space: in Kokkos 3.4 only the thread that called
// Kokkos::initialize may dispatch to Kokkos::OpenMP (others get "parallel_reduce ERROR: in parallel
// or not initialized"), while Kokkos::Serial may be dispatched from many std::threads.
//
// Kokkos 3.4 caveat (compat::serial_instances_are_independent == false): all Kokkos::Serial objects
// share ONE global scratch/reduction buffer (HostThreadTeamData). TeamPolicy launches, parallel_scan
// and reductions whose result is kept in that buffer, and the first reduction that needs a bigger
// buffer (it resizes it), race when several team threads dispatch them at the same time. What is safe
// from concurrent team threads on 3.4: RangePolicy/MDRangePolicy parallel_for, and parallel_reduce
// of a value into a host variable or host View once a reduction of that size has run once. Kokkos 4
// gives each thread an independent instance (Serial(NewInstance)), which lifts the caveat.
//
// Instances are created when the team is constructed (Kokkos must be initialized) and released when
// it is destroyed (before Kokkos::finalize).
#pragma once

#include <korch/backend/kokkos_compat.hpp>
#include <korch/backend/spaces.hpp>
#include <korch/error.hpp>

#include <Kokkos_Core.hpp>

#include <utility>

namespace korch {

// The space a team thread launches "device" work on.
#if defined(KOKKOS_ENABLE_CUDA)
using DeviceTaskSpace = Kokkos::Cuda;
#elif defined(KOKKOS_ENABLE_HIP)
using DeviceTaskSpace = compat::HIP;
#else
using DeviceTaskSpace = HostTaskSpace;
#endif

// True when each team thread's device() instance runs on its own stream.
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
inline constexpr bool device_instances_have_own_stream = true;
#else
inline constexpr bool device_instances_have_own_stream = false;
#endif

namespace detail {

// Owns the stream behind a thread's device instance; destroyed after the instance (member order).
class OwnedStream {
 public:
#if defined(KOKKOS_ENABLE_CUDA)
  using stream_type = cudaStream_t;
  OwnedStream() {
    if (cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking) != cudaSuccess) {
      throw Error("thread spaces: cudaStreamCreateWithFlags failed: check the CUDA device and driver");
    }
  }
  ~OwnedStream() {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }
#elif defined(KOKKOS_ENABLE_HIP)
  using stream_type = hipStream_t;
  OwnedStream() {
    if (hipStreamCreateWithFlags(&stream_, hipStreamNonBlocking) != hipSuccess) {
      throw Error("thread spaces: hipStreamCreateWithFlags failed: check the HIP device and driver");
    }
  }
  ~OwnedStream() {
    if (stream_ != nullptr) (void)hipStreamDestroy(stream_);
  }
#else
  using stream_type = void*;
  OwnedStream() = default;
  ~OwnedStream() = default;
#endif
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;

  stream_type get() const noexcept { return stream_; }

 private:
  stream_type stream_ = nullptr;
};

}  // namespace detail

class ThreadSpaces {
 public:
  ThreadSpaces()
      : host_(compat::make_serial_instance()),
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
        device_(compat::make_stream_instance(stream_.get()))
#else
        device_(host_)
#endif
  {
  }

  ~ThreadSpaces() {
    // Work this thread left in flight must not outlive its stream.
    device_.fence();
  }

  ThreadSpaces(const ThreadSpaces&) = delete;
  ThreadSpaces& operator=(const ThreadSpaces&) = delete;

  const HostTaskSpace& host() const noexcept { return host_; }
  const DeviceTaskSpace& device() const noexcept { return device_; }

  // Waits for everything this thread launched on its instances.
  void fence() const {
    device_.fence();
    host_.fence();
  }

 private:
  HostTaskSpace host_;
  detail::OwnedStream stream_;  // declared before device_: outlives it
  DeviceTaskSpace device_;
};

}  // namespace korch
