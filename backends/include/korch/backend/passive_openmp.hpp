// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// libgomp's idle workers spin-wait after every parallel region unless OMP_WAIT_POLICY=passive, on
// the very cores that korch's team threads need next (measured on 2 cores: a runtime cycle right
// after an OpenMP loop took 2x as long). libgomp reads the variable once, when it is loaded, so a
// program that mixes OpenMP loops with korch teams sets it and re-executes itself once.
#pragma once

#include <cstdlib>

#if defined(__linux__)
#include <unistd.h>
#endif

namespace korch {

// Call first thing in main(). Does nothing when OMP_WAIT_POLICY is already set (the user's choice
// wins) or when the environment variable named `opt_out` is set; returns only if it did not
// re-execute (also when re-executing failed: the program then goes on as it is).
inline void prefer_passive_openmp_wait(char** argv, const char* opt_out = nullptr) {
#if defined(__linux__)
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (opt_out != nullptr && std::getenv(opt_out) != nullptr) return;
  ::setenv("OMP_WAIT_POLICY", "passive", 1);
  ::execv("/proc/self/exe", argv);
#else
  (void)argv;
  (void)opt_out;
#endif
}

}  // namespace korch
