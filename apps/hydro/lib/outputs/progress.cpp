// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace korch::hydro {

Progress::Mode Progress::mode_for(bool quiet, std::FILE* out) {
  if (quiet) return Mode::silent;
  return ::isatty(::fileno(out)) ? Mode::live : Mode::lines;
}

Progress::Progress(std::FILE* out, Mode mode, double cells) : out_(out), mode_(mode), cells_(cells) {}

void Progress::update(double fraction, int steps, double t, double dt, double elapsed) {
  if (mode_ == Mode::silent) return;
  fraction = std::clamp(fraction, 0.0, 1.0);
  const bool last = fraction >= 1.0;
  const double rate = elapsed > 0 ? cells_ * steps / elapsed : 0.0;
  if (mode_ == Mode::lines) {
    // Tenths passed, rounded down (the last step always counts as all ten).
    const int tenths = last ? 10 : static_cast<int>(std::floor(fraction * 10.0 + 1e-9));
    if (tenths <= reported_tenths_) return;
    reported_tenths_ = tenths;
    std::fprintf(out_, "progress %3.0f%%  step %d  t = %.4e  dt = %.3e  %.3e cell updates/s\n", 100.0 * fraction, steps,
                 t, dt, rate);
    std::fflush(out_);
    return;
  }
  if (!last && last_draw_ >= 0 && elapsed - last_draw_ < 0.1) return;
  last_draw_ = elapsed;
  constexpr int width = 30;
  const int filled = static_cast<int>(fraction * width);
  std::fprintf(out_, "\r[%s%s] %3.0f%% step %d  t=%.4e  dt=%.3e  %.3e cells/s ",
               std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(width - filled), '.').c_str(), 100.0 * fraction, steps, t, dt,
               rate);
  if (last) std::fputc('\n', out_);
  std::fflush(out_);
}

}  // namespace korch::hydro
