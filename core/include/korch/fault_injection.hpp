// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fault injection: makes the runtime itself fail at a chosen point, so that tests and the soak
// program (bench/bench_soak.cpp) can check that a fault inside the runtime winds the cycle down
// like any other error: every team Idle, the pools balanced, the first error reported with a count
// of the others, and the next cycle runs (docs/thread-team.md, "Failures").
//
//   korch::faults::arm(korch::faults::Point::helper_item, 3);  // the 3rd helper item from now throws
//   runtime.execute(...);                                        // throws the injected korch::Error
//   korch::faults::disarm();
//
// Process-wide. Unarmed, a point costs one relaxed atomic load.
#pragma once

#include <cstdint>

namespace korch::faults {

enum class Point {
  distributor_push,  // the distributor hands a batch of items to a pipeline entry
  helper_item,       // a helper (mover, unpacker, splitter, aggregator) takes an item
};
const char* to_string(Point point) noexcept;

// The `nth` pass (1: the next one) through `point` throws korch::Error("injected fault at ...");
// so does every `every`-th pass after it (0: only once). Replaces what was armed for that point.
void arm(Point point, std::uint64_t nth, std::uint64_t every = 0);
void disarm() noexcept;
// Faults thrown so far (all points), for checks that one fired.
std::uint64_t fired() noexcept;

// Called by the runtime at each point.
void pass(Point point);

}  // namespace korch::faults
