// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-mesh-gen's command line, apart from its main so that the command-line fuzz target can parse
// it without running the program (docs/fuzzing.md).
#pragma once

#include <korch/cli/program.hpp>

#include <memory>
#include <string>

namespace korch::mesh::airfoil {

struct MeshGenArgs {
  int ni = 0, nj = 0;
  double far = 10.0;
  std::string out;
};

// The program "korch-mesh-gen" with its options bound to `args` (which must outlive the parse).
std::unique_ptr<cli::Program> mesh_gen_command_line(MeshGenArgs& args);

}  // namespace korch::mesh::airfoil
