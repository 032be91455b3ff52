// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Strict numeric validators (see validators.hpp).
#include <korch/cli/validators.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace korch::cli {

namespace {

// A bound as the user would write it: 1024, 0.5, 1e+06.
std::string bound_text(long double v) {
  char buf[64];
  if (v == std::floor(v) && std::fabs(v) < 1e20L)
    std::snprintf(buf, sizeof buf, "%.0Lf", v);
  else
    std::snprintf(buf, sizeof buf, "%Lg", v);
  return buf;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

CLI::Validator integer() {
  CLI::Validator v(
      [](std::string& text) -> std::string {
        const std::size_t sign = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
        bool digits = text.size() > sign;
        for (std::size_t i = sign; i < text.size(); ++i) digits = digits && is_digit(text[i]);
        if (!digits) return "'" + text + "' is not an integer";
        unsigned long long magnitude = 0;
        const char* first = text.data() + sign;
        const auto [end, ec] = std::from_chars(first, text.data() + text.size(), magnitude);
        if (ec != std::errc() || end != text.data() + text.size()) return text + " is out of range";
        const bool negative = sign == 1 && text[0] == '-' && magnitude != 0;
        text = (negative ? "-" : "") + std::to_string(magnitude);
        return {};
      },
      "", "integer");
  return v;
}

CLI::Validator finite_real() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const bool plain = !text.empty() && (is_digit(text[0]) || text[0] == '-' || text[0] == '+' || text[0] == '.');
        const bool hex = text.find_first_of("xX") != std::string::npos;
        char* end = nullptr;
        const double v = plain && !hex ? std::strtod(text.c_str(), &end) : 0.0;
        if (!plain || hex || end != text.c_str() + text.size()) return "'" + text + "' is not a number";
        if (!std::isfinite(v)) return text + " is not a finite number";  // nan, inf, 1e999
        return {};
      },
      "", "finite");
}

CLI::Validator within(long double lo, long double hi, bool lo_exclusive, bool show_hi) {
  return CLI::Validator(
      [lo, hi, lo_exclusive, show_hi](std::string& text) -> std::string {
        char* end = nullptr;
        const long double v = std::strtold(text.c_str(), &end);
        if (end != text.c_str() + text.size()) return "'" + text + "' is not a number";
        const bool low_ok = lo_exclusive ? v > lo : v >= lo;
        if (low_ok && v <= hi) return {};
        // Name both bounds when both matter; a type's own limit only when it was crossed.
        const bool say_lo = std::isfinite(lo), say_hi = std::isfinite(hi) && (show_hi || v > hi);
        const std::string above = "a number above " + bound_text(lo);
        std::string use;
        if (say_lo && say_hi)
          use = lo_exclusive ? above + " and at most " + bound_text(hi) : bound_text(lo) + " to " + bound_text(hi);
        else if (say_lo)
          use = lo_exclusive ? above : bound_text(lo) + " or more";
        else
          use = "at most " + bound_text(hi);
        return text + " is out of range: use " + use;
      },
      "", "within");
}

CLI::Validator one_of(std::vector<std::string> choices) {
  return CLI::Validator(
      [choices](std::string& text) -> std::string {
        std::string list;
        for (const std::string& c : choices) {
          if (c == text) return {};
          list += (list.empty() ? "" : ", ") + c;
        }
        return "'" + text + "' is not one of " + list;
      },
      "", "one_of");
}

CLI::Validator non_empty() {
  return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "an empty name" : ""; }, "",
                        "non_empty");
}

CLI::Option* add_real(CLI::App& app, const std::string& name, double& value, const std::string& description,
                      long double lo, long double hi, bool lo_exclusive) {
  return app.add_option(name, value, description)
      ->type_name("X")
      ->check(finite_real())
      ->check(within(lo, hi, lo_exclusive));
}

}  // namespace korch::cli
