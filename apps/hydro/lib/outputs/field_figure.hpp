// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The annotated picture of a 2D field (density.png): the field (render_field), a frame with ticks
// in physical units on x and y, a title, and a colour bar labelled with the variable, its ticks and
// the field's min and max.
//
// Layout: the title at the top (first line at twice the font size when it fits, further lines at
// the normal size); below it the field, framed, with x ticks under it and y ticks left of it, each
// labelled with its coordinate and the axis names at the ends; right of the field the colour bar,
// as tall as the field, its variable label above it, tick labels right of it, and "min ..." /
// "max ..." (the field's finite range, in the variable's own units) under it.
//
// Linear scale: colours run from the field's finite min (bottom of the bar) to its max (top).
// Log scale (FieldFigure::log_scale): colours follow log10 of the value from the smallest positive
// value to the largest, so each decade takes an equal step of the bar; the bar is labelled
// "log10(<variable>)" and its ticks are log10 values (every decade when they fit). Values <= 0 (no logarithm) take the
// bottom colour, like values below the range; non-finite values stay grey. A field with no positive value falls back to
// the linear scale (FieldFigureLayout::log_scale tells which was drawn).
#pragma once

#include "image.hpp"

#include <array>
#include <string>
#include <vector>

namespace korch::hydro {

struct FieldFigure {
  std::vector<std::string> title;           // lines, top to bottom
  std::string variable = "density";         // the colour bar's label
  std::array<double, 2> x_range{0.0, 1.0};  // physical extent of the field (cell faces)
  std::array<double, 2> y_range{0.0, 1.0};
  std::string x_label = "x", y_label = "y";
  bool log_scale = false;
  int scale = 0;  // pixels per cell; 0: field_scale(nx, ny)
};

struct FieldFigureLayout {
  int width = 0, height = 0;
  int title_top = 0, title_scale = 2;
  int plot_left = 0, plot_top = 0, plot_width = 0, plot_height = 0;  // the field's pixels
  int bar_left = 0, bar_top = 0, bar_width = 0, bar_height = 0;      // inside the bar's frame
  bool log_scale = false;                   // the scale drawn (false when log was asked for but impossible)
  double lo = 0.0, hi = 1.0;                // the colour range (log10 of values on the log scale)
  double value_min = 0.0, value_max = 0.0;  // finite range of the field itself
  std::vector<double> x_ticks, y_ticks;     // physical coordinates
  std::vector<double> bar_ticks;            // in colour-range units (log10 values on the log scale)
  // Pixel column of coordinate x, pixel row of coordinate y (row 0 at the top).
  int x_of(double x, const FieldFigure& figure) const;
  int y_of(double y, const FieldFigure& figure) const;
  // Pixel row of the bar at colour-range value v (lo at the bottom row, hi at the top row).
  int bar_y(double v) const;
};

// The layout of the figure of values[i + nx*j] (j = 0 at the bottom). Throws korch::Error on the
// same bad arguments as render_field, and when an axis range is empty or not finite.
FieldFigureLayout field_figure_layout(const std::vector<double>& values, int nx, int ny, const FieldFigure& figure);

Image render_field_figure(const std::vector<double>& values, int nx, int ny, const FieldFigure& figure);

}  // namespace korch::hydro
