// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The command line of a korch program: a CLI11 App with korch's help layout and footer, argv split
// so that Kokkos sees only --kokkos-* arguments, parsing before Kokkos starts, and one catch-all
// around the program's work. Every program exits with
//   0 success, 1 runtime failure, 2 usage error (nothing was run).
//
//   korch::cli::Program program("korch-baseband", "transmits random frames ...");
//   korch::cli::add_integer(program.app(), "--frames", frames, "frames to transmit", 1);
//   if (auto rc = program.parse(argc, argv)) return *rc;          // --help or a usage error
//   return program.run([&] {
//     Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
//     ...; return 0;
//   });
#pragma once

#include <korch/cli/help_formatter.hpp>
#include <korch/cli/kokkos_args.hpp>
#include <korch/cli/validators.hpp>

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace korch::cli {

inline constexpr int exit_success = 0;
inline constexpr int exit_failure = 1;  // the program ran and failed (or could not allocate)
inline constexpr int exit_usage = 2;    // bad command line: nothing was run

// A command-line mistake found after parsing (options that make no sense together); run() turns it
// into exit code 2. Its message names the option.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Program {
 public:
  // A program that never starts Kokkos takes no --kokkos-* arguments (they are unknown options).
  enum KokkosUse { with_kokkos, without_kokkos };
  // `name` starts every message and the help ("NAME: description").
  Program(std::string name, const std::string& description, KokkosUse kokkos = with_kokkos);
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  CLI::App& app() noexcept { return app_; }
  const std::string& name() const noexcept { return name_; }
  // A paragraph of the help's footer, shown before the Kokkos note and the exit statuses.
  void add_note(const std::string& text) { notes_.push_back(text); }

  // Parses argv. Returns std::nullopt when the program should run, otherwise its exit code: 0
  // after --help (help on stdout), 2 after a usage error ("NAME: message" on stderr).
  std::optional<int> parse(int argc, char** argv);
  // parse() without printing (what the command-line fuzz target calls): nullopt when the program
  // should run, otherwise the exit code and the text parse() prints (on stdout for 0, else stderr).
  struct Outcome {
    int exit_code;
    std::string text;
  };
  std::optional<Outcome> parse_quietly(int argc, char** argv);
  // The help text, as --help prints it.
  std::string help();

  // argv[0] and the --kokkos-* arguments (after parse()), for Kokkos::initialize or ScopeGuard.
  int& kokkos_argc();
  char** kokkos_argv();

  // What the program is about to allocate ("the grid: 4096 x 4096 cells, 1.3 GiB"), said when
  // std::bad_alloc escapes from run().
  void set_allocation_context(std::string what) { allocation_context_ = std::move(what); }

  // Prints "NAME: message" (and, for usage errors, where help is) on stderr; returns the code.
  int usage_error(const std::string& message) const;
  int failure(const std::string& message) const;
  // The lines those two print.
  std::string usage_error_text(const std::string& message) const;
  std::string failure_text(const std::string& message) const;

  // Runs body and returns its exit code; UsageError gives 2, any other exception 1, each with one
  // line on stderr. Catches everything, so a program never ends on an uncaught exception.
  int run(const std::function<int()>& body) noexcept;

 private:
  std::string name_;
  KokkosUse kokkos_use_;
  CLI::App app_;
  std::vector<std::string> notes_;
  std::unique_ptr<KokkosArgs> kokkos_;
  std::string allocation_context_;
};

// CLI11's message for a parse error, with the subcommands listed when one was not recognized.
std::string describe(const CLI::ParseError& error, const CLI::App& app);

}  // namespace korch::cli
