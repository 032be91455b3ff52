# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Warning and sanitizer options for korch's own targets (never applied to Kokkos itself).

# KORCH_SANITIZE=address is AddressSanitizer together with UndefinedBehaviorSanitizer, and undefined
# behaviour stops the program (-fno-sanitize-recover) so that a suite fails on it.
if(KORCH_SANITIZE STREQUAL "address")
  set(KORCH_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined)
elseif(KORCH_SANITIZE)
  set(KORCH_SANITIZE_FLAGS -fsanitize=${KORCH_SANITIZE})
endif()

function(korch_project_options target)
  target_compile_options(${target} PRIVATE
    $<$<CXX_COMPILER_ID:GNU,Clang>:-Wall -Wextra>
    $<$<AND:$<BOOL:${KORCH_WERROR}>,$<CXX_COMPILER_ID:GNU,Clang>>:-Werror>)
  # Fortran sources (the module over the C API, its test and benchmark): gfortran's warnings too,
  # less two that the C interface makes noise of: action routines take every argument of the C
  # signature, used or not, and the checks compare reals bitwise on purpose.
  if(CMAKE_Fortran_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:Fortran>:-Wno-compare-reals -Wno-unused-dummy-argument>)
  endif()
  # Sanitized code with line tables only (-g1: reports name files and lines), at -O1 for
  # ThreadSanitizer and -Og for AddressSanitizer with UndefinedBehaviorSanitizer, whose checks make
  # -O1 about three times slower to compile than -Og (docs/testing.md, "Build time").
  if(KORCH_SANITIZE)
    if(KORCH_SANITIZE STREQUAL "address")
      set(_korch_sanitize_optimize -Og)
    else()
      set(_korch_sanitize_optimize -O1)
    endif()
    target_compile_options(${target} PRIVATE ${KORCH_SANITIZE_FLAGS} -fno-omit-frame-pointer ${_korch_sanitize_optimize} -g1)
    target_link_options(${target} PRIVATE ${KORCH_SANITIZE_FLAGS})
  endif()
endfunction()

if(KORCH_SANITIZE AND NOT KORCH_SANITIZE MATCHES "^(thread|address)$")
  message(FATAL_ERROR "KORCH_SANITIZE='${KORCH_SANITIZE}': use thread or address (or leave it empty)")
endif()
if(KORCH_SANITIZE STREQUAL "thread" AND KORCH_BACKEND STREQUAL "openmp")
  message(WARNING "ThreadSanitizer reports false races inside libgomp; use KORCH_BACKEND=serial or threads")
endif()
