// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "image.hpp"

#include <korch/error.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

namespace korch::hydro {

namespace {

// Control points of the colour map (position, R, G, B), chosen for this project.
struct ControlPoint {
  double t;
  double r, g, b;
};
constexpr ControlPoint kControl[] = {
    {0.00, 20, 24, 82},     // dark blue
    {0.28, 40, 130, 200},   // blue-cyan
    {0.55, 235, 240, 160},  // pale yellow-green
    {0.80, 245, 140, 40},   // orange
    {1.00, 130, 20, 20},    // dark red
};

std::uint8_t to_byte(double v) { return static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L)); }

}  // namespace

Rgb colour_map(double t) {
  if (std::isnan(t)) return kNonFiniteGrey;
  t = std::clamp(t, 0.0, 1.0);
  constexpr int count = static_cast<int>(sizeof(kControl) / sizeof(kControl[0]));
  for (int k = 1; k < count; ++k) {
    const ControlPoint& a = kControl[k - 1];
    const ControlPoint& b = kControl[k];
    if (t <= b.t || k == count - 1) {
      const double w = (t - a.t) / (b.t - a.t);
      return {to_byte(a.r + w * (b.r - a.r)), to_byte(a.g + w * (b.g - a.g)), to_byte(a.b + w * (b.b - a.b))};
    }
  }
  return kNonFiniteGrey;  // not reached
}

int field_scale(int nx, int ny) {
  const int side = std::max(1, std::max(nx, ny));
  return std::max(1, (kMinFieldPixels + side - 1) / side);
}

Image render_field(const std::vector<double>& values, int nx, int ny, double lo, double hi) {
  return render_field_scaled(values, nx, ny, lo, hi, field_scale(nx, ny));
}

Image render_field_scaled(const std::vector<double>& values, int nx, int ny, double lo, double hi, int scale) {
  if (nx < 1 || ny < 1)
    throw Error::format("render_field: the grid is {} x {} cells: both sides must be at least 1", nx, ny);
  if (values.size() != static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny))
    throw Error::format("render_field: {} values for a {} x {} grid: pass exactly nx * ny = {}", values.size(), nx, ny,
                        static_cast<std::size_t>(nx) * static_cast<std::size_t>(ny));
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi)
    throw Error::format("render_field: the colour range [{}, {}] is not a finite range with lo <= hi", lo, hi);
  if (scale < 1) throw Error::format("render_field: scale {} must be at least 1", scale);
  const long long w = static_cast<long long>(nx) * scale, h = static_cast<long long>(ny) * scale;
  if (w > 1 << 15 || h > 1 << 15)
    throw Error::format("render_field: a {} x {} image is too large (at most 32768 pixels a side)", w, h);

  Image image;
  image.width = static_cast<int>(w);
  image.height = static_cast<int>(h);
  image.rgb.resize(3 * static_cast<std::size_t>(w) * static_cast<std::size_t>(h));
  const double span = hi - lo;
  for (int j = 0; j < ny; ++j) {
    for (int i = 0; i < nx; ++i) {
      const double v = values[static_cast<std::size_t>(i) + static_cast<std::size_t>(nx) * static_cast<std::size_t>(j)];
      Rgb c;
      if (!std::isfinite(v))
        c = kNonFiniteGrey;
      else if (span > 0)
        c = colour_map((v - lo) / span);
      else
        c = colour_map(v > lo ? 1.0 : 0.0);
      for (int dy = 0; dy < scale; ++dy) {
        const std::size_t row = static_cast<std::size_t>(image.height - scale * (j + 1) + dy);
        std::uint8_t* p = image.rgb.data() + 3 * (row * static_cast<std::size_t>(image.width) +
                                                  static_cast<std::size_t>(scale) * static_cast<std::size_t>(i));
        for (int dx = 0; dx < scale; ++dx, p += 3) {
          p[0] = c[0];
          p[1] = c[1];
          p[2] = c[2];
        }
      }
    }
  }
  return image;
}

Image append_colour_bar(const Image& image) {
  constexpr int gap = 8, bar = 24;
  Image out;
  out.width = image.width + gap + bar;
  out.height = std::max(image.height, 16);
  out.rgb.assign(3 * static_cast<std::size_t>(out.width) * static_cast<std::size_t>(out.height), 255);
  for (int y = 0; y < image.height; ++y)
    std::copy_n(image.rgb.data() + 3 * static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width),
                3 * static_cast<std::size_t>(image.width),
                out.rgb.data() + 3 * static_cast<std::size_t>(y) * static_cast<std::size_t>(out.width));
  const int x0 = image.width + gap;
  for (int y = 0; y < out.height; ++y) {
    const double t = out.height > 1 ? 1.0 - static_cast<double>(y) / (out.height - 1) : 0.0;
    for (int x = x0; x < out.width; ++x) {
      const bool frame = x == x0 || x == out.width - 1 || y == 0 || y == out.height - 1;
      const Rgb c = frame ? Rgb{0, 0, 0} : colour_map(t);
      std::uint8_t* p = out.rgb.data() + 3 * (static_cast<std::size_t>(y) * static_cast<std::size_t>(out.width) +
                                              static_cast<std::size_t>(x));
      p[0] = c[0];
      p[1] = c[1];
      p[2] = c[2];
    }
  }
  return out;
}

std::array<double, 2> finite_range(const std::vector<double>& values) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : values)
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (lo > hi) return {0.0, 0.0};
  return {lo, hi};
}

}  // namespace korch::hydro
