// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The sequential interpreter: the reference semantics of a stream program. Demand-driven: the
// program's instance is ticked, inputs are handed over only when asked for, and the run stops when
// the program finishes (a computer) or starves (asks for input after the last one).
#pragma once

#include <korch/streams/program.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace korch::streams {

struct RunResult {
  std::vector<Item> output;
  std::optional<Value> value;  // set when the program finished (a computer), empty when it starved
  bool starved = false;        // it asked for input after the last item
  std::uint64_t consumed = 0;  // input items taken
};

RunResult run_sequential(const Comp& program, const std::vector<Item>& input, const Env& env = {});

}  // namespace korch::streams
