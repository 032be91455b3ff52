// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-baseband's command line, apart from its main so that the command-line fuzz target can parse
// it without running the program (docs/fuzzing.md).
#pragma once

#include <korch/cli/program.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace korch::streams::baseband {

struct BasebandArgs {
  std::size_t frames = 50, max_len = 1500;
  double sigma = 0.4;
  unsigned threads = 2;
  std::uint64_t seed = 1;
  bool dump = false;
};

// The program "korch-baseband" with its options bound to `args` (which must outlive the parse).
std::unique_ptr<cli::Program> baseband_command_line(BasebandArgs& args);

}  // namespace korch::streams::baseband
