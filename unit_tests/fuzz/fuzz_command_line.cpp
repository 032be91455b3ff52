// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: the programs' command lines, parsed as each program parses them but without running
// it. Input: the program's name on the first line, then one argument per line. Rules checked: a
// parse either lets the program run or ends in --help (0) or a usage error (2) whose one message
// starts with the program's name; never another exception, never exit status 1.
#include "airfoil_command_line.hpp"
#include "baseband_command_line.hpp"
#include "dataflow_command_line.hpp"
#include "fuzz_support.hpp"
#include "mesh_gen_command_line.hpp"

#include <korch/cli/program.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using korch::fuzz::broken;
using korch::fuzz::lines_of;

void check(korch::cli::Program& program, const std::vector<std::string>& args) {
  if (korch::fuzz::parses(program, args) && program.name() == "korch-dataflow" &&
      korch::dataflow::demo::chosen_demos(program).empty()) {
    broken("korch-dataflow runs at least one demo", "");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = lines_of(std::string(reinterpret_cast<const char*>(data), size));
  if (args.empty()) return 0;
  // Each program's options bound to its own variables, as its main binds them.
  korch::mesh::airfoil::AirfoilArgs airfoil;
  korch::mesh::airfoil::MeshGenArgs mesh_gen;
  korch::streams::baseband::BasebandArgs baseband;
  korch::dataflow::demo::DataflowArgs dataflow;
  const std::vector<std::function<std::unique_ptr<korch::cli::Program>()>> programs = {
      [&] { return korch::mesh::airfoil::airfoil_command_line(airfoil); },
      [&] { return korch::mesh::airfoil::mesh_gen_command_line(mesh_gen); },
      [&] { return korch::streams::baseband::baseband_command_line(baseband); },
      [&] { return korch::dataflow::demo::dataflow_command_line(dataflow); },
      // korch-info: no options of its own, only --help and --kokkos-*.
      [] { return std::make_unique<korch::cli::Program>("korch-info", "prints korch's version"); },
  };
  std::unique_ptr<korch::cli::Program> program;
  for (const auto& make : programs) {
    auto candidate = make();
    if (candidate->name() == args[0]) program = std::move(candidate);
  }
  // An unknown name picks a program by its first byte, so mutated names still reach a parser.
  if (!program) program = programs[args[0].empty() ? 0 : static_cast<unsigned char>(args[0][0]) % programs.size()]();
  check(*program, args);
  return 0;
}
