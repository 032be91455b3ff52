// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Debug checks inside a pipeline kernel set error bits (and the node); the host driver turns them
// into one korch::Error after the kernel.
#pragma once

#include <string>

namespace korch::dataflow {

enum ErrorBit : int {
  E_CREDIT = 1,           // a signal was issued with more credit than its data queue holds
  E_QUEUE_OVERFLOW = 2,   // a data queue overflowed (protocol violation)
  E_SIGNAL_OVERFLOW = 4,  // a signal queue overflowed (protocol violation)
  E_EMIT_OVERFLOW = 8,    // a node emitted (or raised) more than its declared maximum per input
  E_SINK_OVERFLOW = 16,   // a sink received more items than its capacity
  E_CLAIM = 32,           // at termination something was still queued, active or held
  E_NO_PARENT = 64,       // an aggregate received an item outside any open parent
  E_STALL = 128,          // a node stayed fireable without making progress
  E_SIGNAL_LOG = 256,     // a sink received more user signals than its log holds
  E_SCRATCH = 512         // an instance's team scratch memory could not be had
};

namespace detail {

// What the set bits mean, "; "-separated, with the fix where there is one.
inline std::string describe_error_bits(int bits) {
  std::string what;
  auto add = [&](int bit, const char* text) {
    if (bits & bit) what += std::string(what.empty() ? "" : "; ") + text;
  };
  add(E_CREDIT, "a signal was issued with more credit than its data queue holds");
  add(E_QUEUE_OVERFLOW, "a data queue overflowed");
  add(E_SIGNAL_OVERFLOW, "a signal queue overflowed");
  add(E_EMIT_OVERFLOW,
      "a node emitted more items per input than its channel declares "
      "(raise the Out<T, K> maximum) or raised more user signals per input than "
      "F::raises declares");
  add(E_SINK_OVERFLOW,
      "a sink received more items than its capacity (pass a larger capacity "
      "to .sink)");
  add(E_CLAIM, "at termination data, signals, an active node or an unreleased parent remained");
  add(E_NO_PARENT, "an aggregate received items outside any parent");
  add(E_STALL, "a node stayed fireable without progress");
  add(E_SIGNAL_LOG,
      "a sink received more user signals than its log holds (raise "
      "Options::signal_log)");
  add(E_SCRATCH,
      "the team scratch memory of an instance could not be had (use "
      "InstanceMemory::global)");
  return what;
}

}  // namespace detail
}  // namespace korch::dataflow
