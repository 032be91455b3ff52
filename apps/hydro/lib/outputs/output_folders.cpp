// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "output_folders.hpp"

#include <korch/error.hpp>
#include <korch/output_files.hpp>

#include <string>

namespace korch::hydro {

namespace {

void check_folder(const char* option, const std::string& folder) {
  try {
    prepare_output_directory(folder);
  } catch (const Error& e) {
    throw Error::format("option {}: {}", option, e.what());
  }
}

}  // namespace

void check_output_folders(const Options& options) {
  // Checkpoints go to --out too: every --checkpoint-every N, and on SIGINT or SIGTERM in any run.
  check_folder("--out", options.out);
  if (options.plot.enabled() && !options.plot.dir.empty()) check_folder("--plot-dir", options.plot.dir);
}

}  // namespace korch::hydro
