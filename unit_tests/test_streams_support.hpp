// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Components for the stream program tests: deterministic transformers and computers whose outputs
// reveal any lost, duplicated or reordered item.
#pragma once

#include <korch/cpu_relax.hpp>
#include <korch/streams.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace korch::streams::testing {

inline double wrap(double x) { return std::fmod(x, 1000003.0); }

// n/m transformer: out[j] = wrap(weighted sum of the round's inputs * 7 + j + salt)
inline Comp mix(const std::string& name, std::uint64_t n, std::uint64_t m, int salt = 0) {
  return map(name, {n, m}, [n, m, salt](const Item* in, Item* out) {
    double s = 0;
    for (std::uint64_t i = 0; i < n; ++i) s = wrap(s * 31 + in[i] * static_cast<double>(i + 1));
    for (std::uint64_t j = 0; j < m; ++j) out[j] = wrap(s * 7 + static_cast<double>(j) + salt);
  });
}

// Computer taking k items (k from the Env variable `var` when set, plus `extra`), emitting
// wrap(x*3+salt) for each and returning their sum mod 1000.
inline Comp taker(const std::string& name, std::size_t k, int salt = 0, std::string var = "") {
  return take_block(
      name, [k, var](const Env& env) { return var.empty() ? k : k + static_cast<std::size_t>(env.at(var) % 5); },
      [salt](const Item* in, std::size_t n, std::vector<Item>& out) {
        Value sum = 0;
        for (std::size_t i = 0; i < n; ++i) {
          out.push_back(wrap(in[i] * 3 + salt));
          sum += static_cast<Value>(in[i]);
        }
        return ((sum % 1000) + 1000) % 1000;
      });
}

// The wait between two unanswered polls of a test's producer or consumer loop: a few pauses, then
// short sleeps. Not a yield: under load a yield puts the thread behind every other thread on its
// core for a time slice, which made these loops take minutes beside two busy processes.
class Backoff {
 public:
  void wait() {
    if (polls_ < 1024) {
      ++polls_;
      korch::cpu_relax();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }
  void reset() { polls_ = 0; }

 private:
  unsigned polls_ = 0;
};

inline std::vector<Item> iota_input(std::size_t n) {
  std::vector<Item> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<Item>(i + 1);
  return v;
}

}  // namespace korch::streams::testing
