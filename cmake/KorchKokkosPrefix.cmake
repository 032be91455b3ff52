# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sets KORCH_DEFAULT_KOKKOS_PREFIX: where `scripts/setup-kokkos <backend>` installs Kokkos,
# $KORCH_CACHE_DIR/kokkos-3.4.01-<backend> (KORCH_CACHE_DIR defaults to ~/.cache/korch).
# Included before project(), so that the cuda backend can pick Kokkos' nvcc_wrapper as compiler.
set(KORCH_BACKENDS serial openmp threads cuda hip)
set(KORCH_BACKEND "openmp" CACHE STRING "Kokkos backend korch runs on: ${KORCH_BACKENDS}")
set_property(CACHE KORCH_BACKEND PROPERTY STRINGS ${KORCH_BACKENDS})
if(DEFINED ENV{KORCH_CACHE_DIR})
  set(_korch_cache "$ENV{KORCH_CACHE_DIR}")
else()
  set(_korch_cache "$ENV{HOME}/.cache/korch")
endif()
set(KORCH_DEFAULT_KOKKOS_PREFIX "${_korch_cache}/kokkos-3.4.01-${KORCH_BACKEND}")

# Kokkos 3.4 with CUDA compiles through its nvcc_wrapper; use the one installed with Kokkos
# unless the caller chose a compiler.
if(KORCH_BACKEND STREQUAL "cuda" AND NOT CMAKE_CXX_COMPILER AND NOT DEFINED ENV{CXX})
  if(Kokkos_ROOT)
    set(_korch_wrapper "${Kokkos_ROOT}/bin/nvcc_wrapper")
  else()
    set(_korch_wrapper "${KORCH_DEFAULT_KOKKOS_PREFIX}/bin/nvcc_wrapper")
  endif()
  if(EXISTS "${_korch_wrapper}")
    set(CMAKE_CXX_COMPILER "${_korch_wrapper}" CACHE FILEPATH "C++ compiler (Kokkos' nvcc_wrapper)")
  endif()
endif()
# Kokkos with HIP compiles through hipcc.
if(KORCH_BACKEND STREQUAL "hip" AND NOT CMAKE_CXX_COMPILER AND NOT DEFINED ENV{CXX})
  find_program(KORCH_HIPCC hipcc PATHS /opt/rocm/bin)
  if(KORCH_HIPCC)
    set(CMAKE_CXX_COMPILER "${KORCH_HIPCC}" CACHE FILEPATH "C++ compiler (hipcc)")
  endif()
endif()
