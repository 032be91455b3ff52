// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Help layout shared by korch's programs: "--steps N   run N steps (default 0)" instead of
// CLI11's "--steps INT:INT in [0 - 2147483647]=0", so that a line reads as a sentence.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace korch::cli {

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter();
  std::string make_option_opts(const CLI::Option* option) const override;
  std::string make_option_desc(const CLI::Option* option) const override;
};

}  // namespace korch::cli
