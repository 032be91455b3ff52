// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/picture/axis.hpp>

#include <fmt/format.h>

#include <cmath>

namespace korch {

namespace {

// Multiples of step inside [lo, hi] (with a little tolerance for rounding).
double tick_count(double lo, double hi, double step) {
  const double tolerance = 1e-9 * step;
  return std::floor((hi + tolerance) / step) - std::ceil((lo - tolerance) / step) + 1.0;
}

}  // namespace

double tick_step(double lo, double hi, int max_ticks) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || !(hi > lo)) return 0.0;
  const double count = max_ticks < 2 ? 2.0 : max_ticks;
  // The smallest step of 1, 2 or 5 times a power of ten that keeps the ticks within the count:
  // candidates from larger than the span down to a thousandth of it.
  const int top = static_cast<int>(std::floor(std::log10(hi - lo))) + 1;
  double best = 0.0;
  for (int e = top; e >= top - 4; --e)
    for (double m : {5.0, 2.0, 1.0}) {
      const double step = m * std::pow(10.0, e);
      if (tick_count(lo, hi, step) > count) return best > 0 ? best : step;
      best = step;
    }
  return best;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks) {
  std::vector<double> ticks;
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) return ticks;
  if (lo == hi) return {lo};
  const double step = tick_step(lo, hi, max_ticks);
  // Ticks as integer multiples of the step, so that rounding does not accumulate along the axis.
  const double tolerance = 1e-9 * step;
  const double first = std::ceil((lo - tolerance) / step), last = std::floor((hi + tolerance) / step);
  for (double k = first; k <= last; k += 1.0) {
    double v = k * step;
    if (std::abs(v) < tolerance) v = 0.0;
    ticks.push_back(v);
  }
  return ticks;
}

std::string tick_label(double value, double step) {
  if (value == 0.0 || (step > 0 && std::abs(value) < 1e-9 * step)) return "0";
  const double magnitude = std::abs(value);
  if (magnitude >= 1e5 || magnitude < 1e-3) return fmt::format("{:.3g}", value);
  return fmt::format("{:.4g}", value);
}

std::string sci_label(double value) { return fmt::format("{:.3e}", value); }

}  // namespace korch
