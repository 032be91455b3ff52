// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// korch-dataflow's command line, apart from its main so that the command-line fuzz target can parse
// it without running the program (docs/fuzzing.md).
#pragma once

#include <korch/cli/program.hpp>
#include <korch/dataflow/options.hpp>

#include <memory>
#include <string>
#include <vector>

namespace korch::dataflow::demo {

struct DataflowArgs {
  int n = 100000;
  Options opt;
  int buffer = 4;
};

// The demos, one subcommand each, in the order "all" runs them.
struct DemoName {
  const char* name;
  const char* help;
};
inline constexpr DemoName demo_names[] = {
    {"filters", "a chain of three filters"},
    {"expander", "a node with 0..16 outputs per item"},
    {"route", "accept/reject routing to two sinks"},
    {"parser", "records enumerated into fields (regions)"},
    {"nested", "records -> fields -> characters (nested regions)"},
};

// The program "korch-dataflow" with its options bound to `args` (which must outlive the parse).
std::unique_ptr<cli::Program> dataflow_command_line(DataflowArgs& args);
// After the parse: the demos named on the command line, in the order given, each once ("all", or
// none, is every demo).
std::vector<std::string> chosen_demos(cli::Program& program);

}  // namespace korch::dataflow::demo
