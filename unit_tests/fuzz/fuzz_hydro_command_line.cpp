// Fuzz target: korch-hydro's command line (apps/hydro/lib/options.hpp), parsed and checked as its
// main does before Kokkos starts, without running the solver. Input: one argument per line (the
// program's name is not part of it). Rules checked: a parse ends in --help (0) or a usage error
// (2) that starts with "korch-hydro: ", or it is accepted and check_options either passes or
// throws korch::Error naming an option ("--"); never another exception. Options that pass the
// checks give a grid whose size is counted without overflow.
#include "options.hpp"

#include <korch/cli/program.hpp>
#include <korch/error.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = lines_of(std::string(reinterpret_cast<const char*>(data), size));
  args.insert(args.begin(), "korch-hydro");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  korch::cli::Program program("korch-hydro", "the compressible Euler solver");
  korch::hydro::Options options;
  korch::hydro::add_options(program.app(), options);
  const auto outcome = program.parse_quietly(static_cast<int>(args.size()), argv.data());
  if (outcome) {
    if (outcome->exit_code != korch::cli::exit_success && outcome->exit_code != korch::cli::exit_usage)
      broken("a parse ends in help (0) or a usage error (2)", outcome->text);
    if (outcome->exit_code == korch::cli::exit_usage && outcome->text.rfind("korch-hydro: ", 0) != 0)
      broken("a usage error starts with the program's name", outcome->text);
    return 0;
  }
  try {
    korch::hydro::check_options(program.app(), options);
  } catch (const korch::Error& e) {
    if (std::string(e.what()).find("--") == std::string::npos) broken("a rejected option is named", e.what());
    return 0;
  } catch (const std::exception& e) {
    broken("check_options throws only korch::Error", e.what());
  }
  const korch::hydro::GridSize grid = korch::hydro::grid_size(options);
  if (grid.blocks < 1 || grid.cells < grid.blocks || grid.bytes < grid.cells)
    broken("accepted options give a grid of positive size", grid.text());
  return 0;
}
