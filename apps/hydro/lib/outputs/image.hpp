// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Pictures of the hydro app's fields: a colour map of a 2D field on korch's Image (written with
// korch::write_png).
//
// The colour map runs through five control points chosen for this project (a dark blue, a
// blue-cyan, a pale yellow-green, an orange and a dark red), interpolated linearly in RGB: low
// values are dark and cold, high values bright then dark warm, so that both ends stay visible.
// Values outside [lo, hi] are clamped; non-finite values (NaN, +-inf) are drawn in mid grey.
#pragma once

#include <korch/picture/image.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace korch::hydro {

// Colour of non-finite values.
inline constexpr Rgb kNonFiniteGrey{128, 128, 128};

// The colour map at t in [0, 1] (clamped; NaN gives kNonFiniteGrey). colour_map(0) is the colour
// of lo, colour_map(1) the colour of hi.
Rgb colour_map(double t);

// Smallest side, in pixels, that render_field scales a field up to (when the grid is smaller).
inline constexpr int kMinFieldPixels = 512;

// The integer nearest-neighbour scale render_field uses for an nx x ny grid: the smallest s >= 1
// with s * max(nx, ny) >= kMinFieldPixels (1 for grids at least that large).
int field_scale(int nx, int ny);

// values[i + nx*j], j = 0 at the bottom; colour map from lo to hi (clamped; lo == hi allowed: values
// <= lo then get the colour of lo, values above it the colour of hi); non-finite values drawn grey.
// The image is the grid scaled up by s = field_scale(nx, ny) in both directions (nearest
// neighbour): cell (i, j) covers pixel columns [s*i, s*i + s) and, since row 0 is the top, pixel
// rows [height - s*(j+1), height - s*j). Throws korch::Error when nx or ny < 1, values.size() !=
// nx*ny, lo or hi is not finite, or lo > hi.
Image render_field(const std::vector<double>& values, int nx, int ny, double lo, double hi);

// Same, with an explicit integer scale (>= 1) instead of field_scale.
Image render_field_scaled(const std::vector<double>& values, int nx, int ny, double lo, double hi, int scale);

// The image with a vertical colour bar appended on its right (a white gap of 8 px, then a 24 px
// bar running from the colour of lo at the bottom to the colour of hi at the top, 1 px black frame).
Image append_colour_bar(const Image& image);

// {min, max} over the finite values (lo = hi = 0 when none is finite).
std::array<double, 2> finite_range(const std::vector<double>& values);

}  // namespace korch::hydro
