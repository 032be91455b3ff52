// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Help layout (see help_formatter.hpp).
#include <korch/cli/help_formatter.hpp>

namespace korch::cli {

HelpFormatter::HelpFormatter() { column_width(26); }

std::string HelpFormatter::make_option_opts(const CLI::Option* option) const {
  if (!option->get_option_text().empty()) return " " + option->get_option_text();
  if (option->get_type_size() == 0 || option->get_type_name().empty()) return {};  // a flag
  return " " + option->get_type_name();
}

std::string HelpFormatter::make_option_desc(const CLI::Option* option) const {
  std::string desc = option->get_description();
  const bool flag = option->get_type_size() == 0;
  if (!flag && !option->get_default_str().empty()) desc += " (default " + option->get_default_str() + ")";
  return desc;
}

}  // namespace korch::cli
