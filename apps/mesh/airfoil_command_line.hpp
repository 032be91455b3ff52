// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-airfoil's command line, apart from its main so that the command-line fuzz target can parse
// it without running the program (docs/fuzzing.md).
#pragma once

#include <korch/cli/program.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace korch::mesh::airfoil {

struct AirfoilArgs {
  std::string dir = std::string(KORCH_MESH_DATA_DIR) + "/airfoil-162";
  std::string mesh_file, constants_file, executor = "direct", dump;
  int iterations = 4, every = 1;
  unsigned threads = 2;
  std::uint64_t seed = 1;
  bool executor_given = false;  // --executor was on the command line (on ranks the default is sequential)
};

// The program "korch-airfoil" with its options bound to `args` (which must outlive the parse).
std::unique_ptr<cli::Program> airfoil_command_line(AirfoilArgs& args);

}  // namespace korch::mesh::airfoil
