# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Maps KORCH_BACKEND to a Kokkos installation and checks that the installation has that backend.
#
#   -DKORCH_BACKEND=serial|openmp|threads|cuda|hip   (default openmp)
#   -DKokkos_ROOT=/path      use this Kokkos (3.4, 4.x or 5.x) instead of the one scripts/setup-kokkos built
#
# Without Kokkos_ROOT the prefix is $KORCH_CACHE_DIR/kokkos-3.4.01-<backend>
# (KORCH_CACHE_DIR defaults to ~/.cache/korch), as made by `scripts/setup-kokkos <backend>`.

if(NOT KORCH_BACKEND IN_LIST KORCH_BACKENDS)
  message(FATAL_ERROR "KORCH_BACKEND='${KORCH_BACKEND}' is not a backend korch knows; use one of: ${KORCH_BACKENDS}")
endif()

if(NOT Kokkos_ROOT AND NOT DEFINED ENV{Kokkos_ROOT} AND NOT Kokkos_DIR)
  set(Kokkos_ROOT "${KORCH_DEFAULT_KOKKOS_PREFIX}")
  if(NOT EXISTS "${Kokkos_ROOT}")
    message(FATAL_ERROR "No Kokkos for backend '${KORCH_BACKEND}' at ${Kokkos_ROOT}.\n"
      "Build it with `scripts/setup-kokkos ${KORCH_BACKEND}`, or point -DKokkos_ROOT at your own Kokkos.")
  endif()
endif()
cmake_policy(SET CMP0074 NEW)   # honour <Package>_ROOT
# No version in find_package: Kokkos' version file accepts only its own major version, and korch
# supports 3.4 through 5.x.
find_package(Kokkos REQUIRED)
if(Kokkos_VERSION VERSION_LESS 3.4)
  message(FATAL_ERROR "korch needs Kokkos 3.4 or newer; ${Kokkos_DIR} has ${Kokkos_VERSION}")
endif()

# The device name Kokkos' config uses for each backend (Kokkos 3.4 says PTHREAD, 4.x THREADS).
set(_korch_devices_serial SERIAL)
set(_korch_devices_openmp OPENMP)
set(_korch_devices_threads PTHREAD THREADS)
set(_korch_devices_cuda CUDA)
set(_korch_devices_hip HIP)
set(_korch_found_device FALSE)
foreach(_dev IN LISTS _korch_devices_${KORCH_BACKEND})
  if(_dev IN_LIST Kokkos_DEVICES)
    set(_korch_found_device TRUE)
  endif()
endforeach()
if(NOT _korch_found_device)
  message(FATAL_ERROR "The Kokkos in ${Kokkos_DIR} was built with devices '${Kokkos_DEVICES}', "
    "which lack the '${KORCH_BACKEND}' backend asked for by KORCH_BACKEND.\n"
    "Build a matching Kokkos with `scripts/setup-kokkos ${KORCH_BACKEND}` or choose another KORCH_BACKEND.")
endif()
# Each team thread runs its own host work on Kokkos::Serial, or on a one-thread Kokkos::OpenMP
# instance where a Kokkos 4 or newer has OpenMP and no Serial (docs/backends.md).
if(NOT "SERIAL" IN_LIST Kokkos_DEVICES)
  if(Kokkos_VERSION VERSION_LESS 4.0 OR NOT "OPENMP" IN_LIST Kokkos_DEVICES)
    message(FATAL_ERROR "korch runs each team thread's host work on Kokkos::Serial, or on one-thread "
      "Kokkos::OpenMP instances with Kokkos 4 or newer; the Kokkos ${Kokkos_VERSION} in ${Kokkos_DIR} "
      "(devices '${Kokkos_DEVICES}') has neither: build it with -DKokkos_ENABLE_SERIAL=ON")
  endif()
  message(STATUS "korch: this Kokkos has no Serial backend; team threads run their host work on "
    "one-thread Kokkos::OpenMP instances")
endif()

# Kokkos Kernels: used by the hydro app's conduction solve; optional for a user's own Kokkos.
find_package(KokkosKernels QUIET HINTS "${Kokkos_ROOT}" "${Kokkos_DIR}/../../..")
if(KokkosKernels_FOUND)
  set(KORCH_HAVE_KOKKOSKERNELS ON)
else()
  set(KORCH_HAVE_KOKKOSKERNELS OFF)
endif()
message(STATUS "korch backend: ${KORCH_BACKEND}; Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR}; "
  "devices ${Kokkos_DEVICES}; Kokkos Kernels: ${KORCH_HAVE_KOKKOSKERNELS}")
