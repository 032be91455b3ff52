// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Commit counts from declared cardinalities.
//
// A transformer of cardinality n/m consumes n and emits m items per round. For a chain
// t1(n1/m1) >>> t2(n2/m2) >>> c, k takes by c need ceil(k/m2)*n2 takes by t2, and those need
// ceil(ceil(k/m2)*n2/m1)*n1 takes by t1:
//
//   takes cards k               = foldr (\(n,m) ts -> ceil(ts/m)*n) k cards
//   takesWithHistory cards p k  = takes cards (p+k) - takes cards p
//   minQSize cards              = takes cards 1
//
// `cards` lists the chain from upstream (the commit queue's reader) to downstream (next to c).
#pragma once

#include <cstdint>
#include <vector>

namespace korch::streams {

struct Cardinality {
  std::uint64_t in = 1;   // n: items consumed per round (>= 1)
  std::uint64_t out = 1;  // m: items emitted per round (>= 1)
  friend bool operator==(const Cardinality& a, const Cardinality& b) { return a.in == b.in && a.out == b.out; }
};

using Cards = std::vector<Cardinality>;

// Throws korch::Error when a cardinality has a zero side.
std::uint64_t takes(const Cards& cards, std::uint64_t k);
std::uint64_t takes_with_history(const Cards& cards, std::uint64_t previous, std::uint64_t k);
std::uint64_t min_qsize(const Cards& cards);

}  // namespace korch::streams
