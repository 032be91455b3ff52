// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: korch-hydro's command line (apps/hydro/lib/run/options.hpp), parsed and checked as its
// main does before Kokkos starts, without running the solver. Input: one argument per line (the
// program's name is not part of it). Rules checked: a parse ends in --help (0) or a usage error
// (2) that starts with "korch-hydro: ", or it is accepted and check_options either passes or
// throws korch::Error naming an option ("--"); never another exception. Options that pass the
// checks give a grid whose size is counted without overflow.
#include "fuzz_support.hpp"
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

using korch::fuzz::broken;
using korch::fuzz::lines_of;
using korch::fuzz::parses;

namespace korch::hydro {
// The plot file writer (HDF5) is not linked here: the command line is checked as a build with
// HDF5 checks it, every plot option included.
bool plot_files_supported() noexcept { return true; }
}  // namespace korch::hydro

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> args = lines_of(std::string(reinterpret_cast<const char*>(data), size));
  args.insert(args.begin(), "korch-hydro");
  korch::cli::Program program("korch-hydro", "the compressible Euler solver");
  korch::hydro::Options options;
  korch::hydro::add_options(program.app(), options);
  if (!parses(program, args)) return 0;
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
