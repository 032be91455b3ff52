// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the fuzz targets share: how a broken rule ends the run, and the command-line targets' input
// (one argument per line) and rules for a parse (docs/fuzzing.md).
#pragma once

#include <korch/cli/program.hpp>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace korch::fuzz {

// Prints the rule and what broke it, then aborts: libFuzzer keeps the input as a finding.
[[noreturn]] inline void broken(const char* rule, const std::string& detail) {
  std::fprintf(stderr, "rule broken: %s\n%.2000s\n", rule, detail.c_str());
  std::abort();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    lines.push_back(text.substr(start, end - start));
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

// Parses `args` (argv[0] first) quietly and checks that the parse either lets the program run or
// ends in --help (0) or a usage error (2) whose message starts with the program's name. Returns
// whether the program should run.
inline bool parses(cli::Program& program, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto outcome = program.parse_quietly(static_cast<int>(args.size()), argv.data());
  if (!outcome) return true;
  if (outcome->exit_code != cli::exit_success && outcome->exit_code != cli::exit_usage)
    broken("a parse ends in help (0) or a usage error (2)", outcome->text);
  if (outcome->exit_code == cli::exit_usage && outcome->text.rfind(program.name() + ": ", 0) != 0)
    broken("a usage error starts with the program's name", outcome->text);
  return false;
}

}  // namespace korch::fuzz
