// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Annotated pictures of the hydro app: the canvas and its font, axis ticks, and the density figure
// (field, axes in physical units, title, colour bar; linear and log scale).
#include <doctest/doctest.h>

#include <korch/error.hpp>
#include <korch/picture/axis.hpp>
#include <korch/picture/canvas.hpp>

#include "field_figure.hpp"
#include "image.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace korch;
using namespace korch::hydro;

namespace {

Rgb at(const Image& image, int x, int y) {
  const std::size_t k =
      3 * (static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) + static_cast<std::size_t>(x));
  return {image.rgb[k], image.rgb[k + 1], image.rgb[k + 2]};
}

bool dark(const Rgb& c) { return c[0] < 80 && c[1] < 80 && c[2] < 80; }

// Dark pixels in [x0, x1) x [y0, y1).
int dark_pixels(const Image& image, int x0, int y0, int x1, int y1) {
  int n = 0;
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) n += dark(at(image, x, y));
  return n;
}

const Rgb kWhite{255, 255, 255};

}  // namespace

TEST_CASE("canvas: text, lines, frames; the font has lower case and the figures' punctuation") {
  Image image = blank_image(80, 20);
  Canvas canvas(image);
  const Rgb ink{0, 0, 0};
  CHECK(text_width("ab", 1) == 11);
  CHECK(text_width("ab", 2) == 22);
  CHECK(text_width("", 2) == 0);
  for (char c : std::string("azAZ09=+()[],^%<>*'|_-/.:;# ")) CHECK(has_glyph(c));
  CHECK_FALSE(has_glyph('~'));
  // 'l' and 'L' differ: lower case is no longer drawn as upper case.
  Image a = blank_image(6, 7), b = blank_image(6, 7);
  Canvas(a).text(0, 0, "l", ink);
  Canvas(b).text(0, 0, "L", ink);
  CHECK(a.rgb != b.rgb);
  // "1" at scale 2: its top pixel (column 2) is a 2 x 2 block; the glyph stays within 10 x 14.
  const int end = canvas.text(10, 2, "1", ink, 2);
  CHECK(end == 10 + 2 * kGlyphAdvance);
  CHECK(canvas.get(14, 2) == ink);
  CHECK(canvas.get(15, 3) == ink);
  CHECK(dark_pixels(image, 10, 2, 20, 16) > 0);
  CHECK(dark_pixels(image, 0, 0, 10, 20) == 0);
  // Unknown characters are a box; max_chars cuts the text.
  Image boxed = blank_image(20, 7);
  Canvas(boxed).text(0, 0, "~~~", ink, 1, 1);
  CHECK(dark_pixels(boxed, 0, 0, 5, 7) == 20);
  CHECK(dark_pixels(boxed, 5, 0, 20, 7) == 0);
  // Lines include both ends; frames are 1 px; drawing outside the image is clipped.
  canvas.line(40, 0, 49, 9, ink);
  for (int k = 0; k < 10; ++k) CHECK(canvas.get(40 + k, k) == ink);
  canvas.frame(60, 5, 70, 15, ink);
  CHECK(canvas.get(60, 5) == ink);
  CHECK(canvas.get(69, 14) == ink);
  CHECK(canvas.get(65, 10) == kWhite);
  canvas.fill(-100, -100, 1000, 1, ink);
  CHECK(canvas.get(79, 0) == ink);
  CHECK(canvas.get(-1, 0) == kWhite);
}

TEST_CASE("axis: nice ticks are 1, 2 or 5 times a power of ten apart, zero is exactly zero") {
  const auto unit = nice_ticks(0.0, 1.0, 6);
  REQUIRE(unit.size() == 6);
  for (std::size_t k = 0; k < unit.size(); ++k) CHECK(unit[k] == doctest::Approx(0.2 * static_cast<double>(k)));
  const auto t = nice_ticks(-0.3, 0.7, 6);
  REQUIRE(t.size() >= 3);
  CHECK(t.front() >= -0.3);
  CHECK(t.back() <= 0.7);
  CHECK(std::find(t.begin(), t.end(), 0.0) != t.end());
  CHECK(tick_step(0.0, 37.0, 5) == 10.0);
  CHECK(tick_step(0.0, 0.0013, 6) == doctest::Approx(0.0005));
  CHECK(nice_ticks(2.0, 2.0).size() == 1);
  CHECK(nice_ticks(3.0, 2.0).empty());
  CHECK(nice_ticks(0.0, std::numeric_limits<double>::infinity()).empty());
  CHECK(tick_label(0.25) == "0.25");
  CHECK(tick_label(1e-17, 0.1) == "0");
  CHECK(tick_label(-3.0) == "-3");
  CHECK(tick_label(1.5e-5) == "1.5e-05");
  CHECK(sci_label(0.05) == "5.000e-02");
}

TEST_CASE("field figure: the field framed by axes, a title and a colour bar that follows colour_map") {
  const int nx = 40, ny = 20;
  std::vector<double> values(static_cast<std::size_t>(nx * ny));
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) values[static_cast<std::size_t>(i + nx * j)] = 1.0 + i + 0.5 * j;
  FieldFigure figure;
  figure.title = {"sedov 2D, t = 0.01", "40 x 20 cells, configuration cpu"};
  figure.x_range = {0.0, 2.0};
  figure.y_range = {0.0, 1.0};
  figure.scale = 8;
  const FieldFigureLayout l = field_figure_layout(values, nx, ny, figure);
  const Image image = render_field_figure(values, nx, ny, figure);
  const Image field = render_field_scaled(values, nx, ny, l.lo, l.hi, 8);
  CHECK(image.width == l.width);
  CHECK(image.height == l.height);
  // Larger than the field by the margins: axes left and below, the title above, the bar right.
  CHECK(l.plot_width == field.width);
  CHECK(l.plot_height == field.height);
  CHECK(l.plot_left >= 30);
  CHECK(l.plot_top >= 2 * kGlyphHeight + 10);
  CHECK(image.height - (l.plot_top + l.plot_height) >= 2 * kGlyphHeight);
  CHECK(l.bar_left >= l.plot_left + l.plot_width + 10);
  CHECK(image.width >= l.bar_left + l.bar_width + 20);
  // The field is copied unchanged into its place.
  for (int y : {0, 37, field.height - 1})
    for (int x : {0, 101, field.width - 1}) CHECK(at(image, l.plot_left + x, l.plot_top + y) == at(field, x, y));
  CHECK(l.lo == 1.0);
  CHECK(l.hi == 1.0 + 39 + 9.5);
  CHECK(l.value_min == 1.0);
  CHECK_FALSE(l.log_scale);
  // The colour bar runs through colour_map from its bottom row (0) to its top row (1).
  const int bx = l.bar_left + l.bar_width / 2, bottom = l.bar_top + l.bar_height - 1;
  for (int y = l.bar_top; y <= bottom; y += 7)
    CHECK(at(image, bx, y) == colour_map(static_cast<double>(bottom - y) / (l.bar_height - 1)));
  CHECK(at(image, bx, bottom) == colour_map(0.0));
  CHECK(at(image, bx, l.bar_top) == colour_map(1.0));
  // Ticks: labelled bar ticks inside the range, dark tick marks beside the bar, under and left of
  // the field, at the positions of the ticks' values.
  REQUIRE(l.bar_ticks.size() >= 2);
  for (double v : l.bar_ticks) {
    CHECK(v >= l.lo);
    CHECK(v <= l.hi);
    CHECK(dark(at(image, l.bar_left + l.bar_width + 2, l.bar_y(v))));
  }
  CHECK(l.x_ticks == nice_ticks(0.0, 2.0, std::max(2, std::min(8, l.plot_width / 90))));
  for (double x : l.x_ticks) CHECK(dark(at(image, l.x_of(x, figure), l.plot_top + l.plot_height + 2)));
  for (double y : l.y_ticks) CHECK(dark(at(image, l.plot_left - 3, l.y_of(y, figure))));
  CHECK(l.x_of(0.0, figure) == l.plot_left);
  CHECK(l.x_of(2.0, figure) == l.plot_left + l.plot_width - 1);
  CHECK(l.y_of(0.0, figure) == l.plot_top + l.plot_height - 1);
  // Text: the title (twice the font size), the bar's label, tick labels and min/max.
  CHECK(l.title_scale == 2);
  CHECK(dark_pixels(image, 0, l.title_top, image.width, l.title_top + 2 * kGlyphHeight) > 200);
  CHECK(dark_pixels(image, l.bar_left - 1, l.plot_top - 6 - kGlyphHeight, image.width, l.plot_top - 6) > 20);
  CHECK(dark_pixels(image, l.bar_left + l.bar_width + 8, l.bar_top - 4, image.width, bottom + 4) > 20);
  CHECK(dark_pixels(image, l.bar_left - 1, bottom + 4, image.width, image.height) > 40);
  CHECK(dark_pixels(image, 0, l.plot_top, l.plot_left - 8, l.plot_top + l.plot_height) > 20);
  // A first line too long for twice the size is drawn at the normal size, widening the picture if need be.
  FieldFigure wordy = figure;
  wordy.title = {std::string(100, 'w')};
  const FieldFigureLayout lw = field_figure_layout(values, nx, ny, wordy);
  CHECK(lw.title_scale == 1);
  CHECK(lw.width >= text_width(wordy.title[0]) + 24);
  // Without a title the picture is shorter.
  FieldFigure untitled = figure;
  untitled.title.clear();
  CHECK(field_figure_layout(values, nx, ny, untitled).height < l.height);
  CHECK_THROWS_AS(field_figure_layout(values, nx, ny,
                                      [&] {
                                        FieldFigure bad = figure;
                                        bad.x_range = {1.0, 1.0};
                                        return bad;
                                      }()),
                  korch::Error);
}

TEST_CASE("field figure: the log scale maps a decade per equal step; values <= 0 take the bottom colour") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Four identical rows of 8 cells.
  const std::vector<double> row{1e-3, 1e-2, 1e-1, 1.0, 0.0, -5.0, nan, 0.5};
  std::vector<double> values;
  for (int j = 0; j < 4; ++j) values.insert(values.end(), row.begin(), row.end());
  FieldFigure figure;
  figure.log_scale = true;
  figure.scale = 40;
  const FieldFigureLayout l = field_figure_layout(values, 8, 4, figure);
  const Image image = render_field_figure(values, 8, 4, figure);
  CHECK(l.log_scale);
  CHECK(l.lo == doctest::Approx(-3.0));
  CHECK(l.hi == doctest::Approx(0.0));
  CHECK(l.value_min == -5.0);
  CHECK(l.value_max == 1.0);
  auto cell = [&](int i) { return at(image, l.plot_left + 40 * i + 20, l.plot_top + 20); };
  CHECK(cell(0) == colour_map(0.0));
  CHECK(cell(1) == colour_map(1.0 / 3.0));
  CHECK(cell(2) == colour_map(2.0 / 3.0));
  CHECK(cell(3) == colour_map(1.0));
  CHECK(cell(4) == colour_map(0.0));
  CHECK(cell(5) == colour_map(0.0));
  CHECK(cell(6) == kNonFiniteGrey);
  // Bar ticks are log10 values: the decades -3 .. 0, one per equal step of the bar.
  CHECK(l.bar_ticks == std::vector<double>{-3.0, -2.0, -1.0, 0.0});
  const int step = l.bar_y(-3.0) - l.bar_y(-2.0);
  CHECK(step > 0);
  CHECK(std::abs((l.bar_y(-2.0) - l.bar_y(-1.0)) - step) <= 1);
  CHECK(std::abs((l.bar_y(-1.0) - l.bar_y(0.0)) - step) <= 1);
  // The same field on the linear scale: the colour range is the finite range itself.
  FieldFigure linear = figure;
  linear.log_scale = false;
  const FieldFigureLayout ll = field_figure_layout(values, 8, 4, linear);
  CHECK_FALSE(ll.log_scale);
  CHECK(ll.lo == -5.0);
  // No positive value: the figure falls back to the linear scale.
  const FieldFigureLayout none = field_figure_layout({0.0, -1.0, nan}, 3, 1, figure);
  CHECK_FALSE(none.log_scale);
  CHECK(none.lo == -1.0);
  CHECK(none.hi == 0.0);
  CHECK(render_field_figure({0.0, -1.0, nan}, 3, 1, figure).width == none.width);
}
