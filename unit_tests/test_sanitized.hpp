// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Whether this suite is built under a sanitizer (korch_add_suite in unit_tests/CMakeLists.txt
// defines KORCH_TEST_SANITIZED there). Instrumented code runs ten to twenty times slower, so physics
// checks at sizes whose code paths smaller cases already run are skipped there, and randomized
// comparisons take fewer rounds (docs/testing.md, "Sanitizers").
#pragma once

namespace korch::test {

#ifdef KORCH_TEST_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

}  // namespace korch::test
