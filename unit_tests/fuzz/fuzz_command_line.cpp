// Fuzz target: the programs' command lines, parsed as each program parses them but without running
// it. Input: the program's name on the first line, then one argument per line. Rules checked: a
// parse either lets the program run or ends in --help (0) or a usage error (2) whose one message
// starts with the program's name; never another exception, never exit status 1.
#include "airfoil_command_line.hpp"
#include "baseband_command_line.hpp"
#include "dataflow_command_line.hpp"
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

[[noreturn]] void broken(const char* rule, const std::string& detail) {
  std::fprintf(stderr, "rule broken: %s\n%.2000s\n", rule, detail.c_str());
  std::abort();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

void check(korch::cli::Program& program, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto outcome = program.parse_quietly(static_cast<int>(args.size()), argv.data());
  if (!outcome) {
    if (program.name() == "korch-dataflow" && korch::dataflow::demo::chosen_demos(program).empty()) {
      broken("korch-dataflow runs at least one demo", "");
    }
    return;
  }
  if (outcome->exit_code != korch::cli::exit_success && outcome->exit_code != korch::cli::exit_usage) {
    broken("a parse ends in help (0) or a usage error (2)", outcome->text);
  }
  if (outcome->exit_code == korch::cli::exit_usage && outcome->text.rfind(program.name() + ": ", 0) != 0) {
    broken("a usage error starts with the program's name", outcome->text);
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
