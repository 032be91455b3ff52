// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One iteration of a spin-wait: tells the core that this thread is polling, so that a hyperthread
// sibling gets the execution resources and the loop does not flood the memory system.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace korch {

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace korch
