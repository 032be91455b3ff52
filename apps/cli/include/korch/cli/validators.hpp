// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Strict numeric options for CLI11. CLI11 2.1 alone accepts "010" (octal 8), " 5", "nan", "inf"
// and "1e999" (inf), and its range messages print DBL_MAX in full; these validators read only
// plain decimal numbers and say in one line what is wrong and what to use.
//
//   korch::cli::add_integer(app, "--frames", frames, "frames to transmit", 1);
//   korch::cli::add_real(app, "--sigma", sigma, "noise standard deviation", 0.0);
#pragma once

#include <CLI/CLI.hpp>

#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace korch::cli {

// An integer in decimal: optional sign, digits, nothing else. Rewrites the value in canonical form
// ("007" -> "7") so that CLI11's own conversion (base 0) cannot read it as octal.
CLI::Validator integer();
// A finite number: the whole text is a decimal number (no trailing junk, no spaces) that is
// neither nan nor infinite nor out of double's range.
CLI::Validator finite_real();
// lo <= value <= hi; a bound of +-infinity is open-ended. `lo_exclusive`: lo < value. The message
// names hi only when `show_hi` or when the value is above it (hi is then a type's limit).
CLI::Validator within(long double lo, long double hi, bool lo_exclusive = false, bool show_hi = true);
// One of `choices`, spelled exactly ("'gpu' is not one of cpu, device, split").
CLI::Validator one_of(std::vector<std::string> choices);
// A non-empty text (a file or folder name).
CLI::Validator non_empty();

// An integer option (or positional, when `name` has no leading dash) of type T in [lo, hi].
template <class T>
CLI::Option* add_integer(CLI::App& app, const std::string& name, T& value, const std::string& description,
                         long double lo, long double hi = static_cast<long double>(std::numeric_limits<T>::max())) {
  static_assert(std::is_integral_v<T>, "add_integer takes an integer variable");
  const long double lowest = static_cast<long double>(std::numeric_limits<T>::lowest());
  const long double highest = static_cast<long double>(std::numeric_limits<T>::max());
  return app.add_option(name, value, description)
      ->type_name("N")
      ->transform(integer())
      ->check(within(lo < lowest ? lowest : lo, hi > highest ? highest : hi, false, hi < highest));
}

// A real option (or positional) in [lo, hi] ((lo, hi] with lo_exclusive), always finite.
CLI::Option* add_real(CLI::App& app, const std::string& name, double& value, const std::string& description,
                      long double lo = -std::numeric_limits<long double>::infinity(),
                      long double hi = std::numeric_limits<long double>::infinity(), bool lo_exclusive = false);

}  // namespace korch::cli
