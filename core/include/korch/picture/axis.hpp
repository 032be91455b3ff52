// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Axis ticks for korch's pictures (the timeline's time axis, an application's figures): "nice"
// tick values (1, 2 or 5 times a power of ten apart) and short labels for them.
#pragma once

#include <string>
#include <vector>

namespace korch {

// Tick values inside [lo, hi] (ends included when they fall on a tick), at most about max_ticks of
// them, spaced by 1, 2 or 5 times a power of ten, in increasing order. A tick that should be zero is
// exactly zero. Empty when lo or hi is not finite or lo > hi; {lo} when lo == hi.
std::vector<double> nice_ticks(double lo, double hi, int max_ticks = 6);

// The spacing nice_ticks uses for [lo, hi] (0 when it returns fewer than two ticks).
double tick_step(double lo, double hi, int max_ticks = 6);

// A short label for a tick value: up to 4 significant digits, no trailing zeros, an exponent only
// for very large or small magnitudes ("0", "0.25", "-3", "1.5e-05"). Values within 1e-9 * step of
// zero print as "0".
std::string tick_label(double value, double step = 0.0);

// A value with 4 significant digits in scientific notation ("1.234e-05"), for ranges and times.
std::string sci_label(double value);

}  // namespace korch
