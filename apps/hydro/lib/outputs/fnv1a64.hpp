// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// FNV-1a over 64 bits, fed in pieces: the checksum of the files korch-hydro reads back
// (checkpoints, as they are written or read, and plot series records) and the adaptive mesh's
// state hash. Each step xors one byte into the state and multiplies by an odd prime, a bijection
// of the state for a given byte, so any change confined to one byte (every single flipped bit)
// always changes the result; other damage goes unseen with a chance of about 2^-64.
#pragma once

#include <cstddef>
#include <cstdint>

namespace korch::hydro {

class Fnv1a64 {
 public:
  void add(const void* bytes, std::size_t n) noexcept {
    const auto* p = static_cast<const unsigned char*>(bytes);
    std::uint64_t h = value_;
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;  // the 64-bit FNV prime
    value_ = h;
  }
  std::uint64_t value() const noexcept { return value_; }

 private:
  std::uint64_t value_ = 14695981039346656037ull;  // the 64-bit FNV offset basis
};

}  // namespace korch::hydro
