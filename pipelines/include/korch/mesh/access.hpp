// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Access modes of par_loop arguments (OP2): how a kernel uses the value an argument
// points at. Min/Max are for mutable globals only.
#pragma once

namespace korch::mesh {

enum class Access {
  Read,   // the kernel only reads
  Write,  // the kernel assigns every component, never reads
  RW,     // the kernel reads and assigns
  Inc,    // the kernel only adds to (+=, -=); never reads the value
  Min,    // global only: the kernel lowers it (x = min(x, v))
  Max,    // global only: the kernel raises it (x = max(x, v))
};

// "READ", "WRITE", "RW", "INC", "MIN", "MAX" (OP2's spelling, used in errors and dumps).
inline const char* to_string(Access access) noexcept {
  switch (access) {
    case Access::Read: return "READ";
    case Access::Write: return "WRITE";
    case Access::RW: return "RW";
    case Access::Inc: return "INC";
    case Access::Min: return "MIN";
    case Access::Max: return "MAX";
  }
  return "?";
}

// True for the modes that change the value (everything but Read).
inline constexpr bool modifies(Access access) noexcept { return access != Access::Read; }

}  // namespace korch::mesh
