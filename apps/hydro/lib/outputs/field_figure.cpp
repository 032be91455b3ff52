// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "field_figure.hpp"

#include <korch/error.hpp>
#include <korch/picture/axis.hpp>
#include <korch/picture/canvas.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace korch::hydro {

namespace {

constexpr int kMargin = 12;
constexpr int kTickLength = 5;
constexpr int kLabelGap = 3;
constexpr int kBarGap = 28, kBarWidth = 20;
constexpr int kLineSpacing = 5;
const Rgb kInk{25, 25, 25};

// The values that are coloured and their colour range: the field itself, or log10 of it.
struct ColourValues {
  std::vector<double> values;
  bool log_scale = false;
  double lo = 0.0, hi = 0.0;
};

ColourValues colour_values(const std::vector<double>& values, bool log_scale) {
  ColourValues out;
  if (log_scale) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
    for (double v : values)
      if (std::isfinite(v) && v > 0) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    if (hi > 0) {  // at least one positive value
      out.log_scale = true;
      out.lo = std::log10(lo);
      out.hi = std::log10(hi);
      out.values.reserve(values.size());
      // Non-positive values have no logarithm: they take the bottom colour; NaN and inf stay grey.
      for (double v : values) out.values.push_back(!std::isfinite(v) ? v : (v > 0 ? std::log10(v) : out.lo));
      return out;
    }
  }
  out.values = values;
  const auto range = finite_range(values);
  out.lo = range[0];
  out.hi = range[1];
  return out;
}

int max_label_width(const std::vector<double>& ticks) {
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 0.0;
  int w = 0;
  for (double v : ticks) w = std::max(w, text_width(tick_label(v, step)));
  return w;
}

int title_height(const std::vector<std::string>& lines, int scale) {
  if (lines.empty()) return 0;
  return kGlyphHeight * scale + static_cast<int>(lines.size() - 1) * (kGlyphHeight + kLineSpacing);
}

std::string bar_label(const FieldFigure& figure, bool log_scale) {
  return log_scale ? "log10(" + figure.variable + ")" : figure.variable;
}

}  // namespace

int FieldFigureLayout::x_of(double x, const FieldFigure& figure) const {
  const double f = (x - figure.x_range[0]) / (figure.x_range[1] - figure.x_range[0]);
  return std::clamp(plot_left + static_cast<int>(std::floor(f * plot_width)), plot_left, plot_left + plot_width - 1);
}

int FieldFigureLayout::y_of(double y, const FieldFigure& figure) const {
  const double f = (y - figure.y_range[0]) / (figure.y_range[1] - figure.y_range[0]);
  const int up = static_cast<int>(std::floor(f * plot_height));
  return std::clamp(plot_top + plot_height - 1 - up, plot_top, plot_top + plot_height - 1);
}

int FieldFigureLayout::bar_y(double v) const {
  const double t = hi > lo ? std::clamp((v - lo) / (hi - lo), 0.0, 1.0) : 0.0;
  return bar_top + bar_height - 1 - static_cast<int>(std::lround(t * (bar_height - 1)));
}

FieldFigureLayout field_figure_layout(const std::vector<double>& values, int nx, int ny, const FieldFigure& figure) {
  for (const auto* r : {&figure.x_range, &figure.y_range})
    if (!std::isfinite((*r)[0]) || !std::isfinite((*r)[1]) || !((*r)[1] > (*r)[0]))
      throw Error::format("field figure: the axis range [{}, {}] is not a finite range with lo < hi", (*r)[0], (*r)[1]);
  if (nx < 1 || ny < 1)
    throw Error::format("field figure: the grid is {} x {} cells: both sides must be at least 1", nx, ny);
  const int scale = figure.scale > 0 ? figure.scale : field_scale(nx, ny);
  FieldFigureLayout l;
  const ColourValues cv = colour_values(values, figure.log_scale);
  l.log_scale = cv.log_scale;
  l.lo = cv.lo;
  l.hi = cv.hi;
  const auto range = finite_range(values);
  l.value_min = range[0];
  l.value_max = range[1];
  l.plot_width = static_cast<int>(std::min<long long>(static_cast<long long>(nx) * scale, 1 << 16));
  l.plot_height = static_cast<int>(std::min<long long>(static_cast<long long>(ny) * scale, 1 << 16));
  l.x_ticks = nice_ticks(figure.x_range[0], figure.x_range[1], std::clamp(l.plot_width / 90, 2, 8));
  l.y_ticks = nice_ticks(figure.y_range[0], figure.y_range[1], std::clamp(l.plot_height / 60, 2, 8));
  l.bar_ticks = nice_ticks(l.lo, l.hi, std::clamp(l.plot_height / 60, 2, 8));
  if (l.log_scale) {
    // Every decade gets a tick when they fit (20 px apart at least).
    const double first = std::ceil(l.lo - 1e-9), last = std::floor(l.hi + 1e-9);
    if (last - first >= 1.0 && last - first + 1.0 <= std::max(2, l.plot_height / 20)) {
      l.bar_ticks.clear();
      for (double d = first; d <= last; d += 1.0) l.bar_ticks.push_back(d);
    }
  }

  l.plot_left = kMargin + text_width(figure.y_label) + 8 + max_label_width(l.y_ticks) + kLabelGap + kTickLength + 1;
  const std::string min_text = "min " + sci_label(l.value_min), max_text = "max " + sci_label(l.value_max);
  const int column = std::max({kBarWidth + 1 + kTickLength + kLabelGap + max_label_width(l.bar_ticks),
                               text_width(bar_label(figure, l.log_scale)), text_width(min_text), text_width(max_text)});
  l.width = l.plot_left + l.plot_width + kBarGap + column + kMargin;
  int widest_title = 0;
  for (std::size_t k = 0; k < figure.title.size(); ++k)
    widest_title = std::max(widest_title, text_width(figure.title[k], k == 0 ? 2 : 1));
  l.title_scale = 2;
  if (!figure.title.empty() && widest_title > l.width - 2 * kMargin) {
    l.title_scale = 1;  // a long first line at the normal size rather than a wider picture
    widest_title = 0;
    for (const auto& line : figure.title) widest_title = std::max(widest_title, text_width(line));
  }
  l.width = std::max(l.width, widest_title + 2 * kMargin);
  l.title_top = kMargin;
  const int title = title_height(figure.title, l.title_scale);
  l.plot_top = kMargin + title + (title > 0 ? 10 : 0) + kGlyphHeight + 6;  // room for the bar's label
  l.bar_left = l.plot_left + l.plot_width + kBarGap;
  l.bar_top = l.plot_top;
  l.bar_width = kBarWidth;
  l.bar_height = l.plot_height;
  const int below_axis = 1 + kTickLength + kLabelGap + kGlyphHeight + 6 + kGlyphHeight;
  const int below_bar = 1 + 6 + 2 * kGlyphHeight + kLineSpacing;
  l.height = l.plot_top + l.plot_height + std::max(below_axis, below_bar) + kMargin;
  return l;
}

Image render_field_figure(const std::vector<double>& values, int nx, int ny, const FieldFigure& figure) {
  const FieldFigureLayout l = field_figure_layout(values, nx, ny, figure);
  const ColourValues cv = colour_values(values, figure.log_scale);
  const int scale = figure.scale > 0 ? figure.scale : field_scale(nx, ny);
  const Image field = render_field_scaled(cv.values, nx, ny, cv.lo, cv.hi, scale);
  Image image = blank_image(l.width, l.height);
  Canvas canvas(image);

  int y = l.title_top;
  for (std::size_t k = 0; k < figure.title.size(); ++k) {
    const int s = k == 0 ? l.title_scale : 1;
    canvas.text(kMargin, y, figure.title[k], kInk, s);
    y += kGlyphHeight * s + kLineSpacing;
  }

  for (int row = 0; row < field.height; ++row)
    std::copy_n(
        field.rgb.data() + 3 * static_cast<std::size_t>(row) * static_cast<std::size_t>(field.width),
        3 * static_cast<std::size_t>(field.width),
        image.rgb.data() + 3 * (static_cast<std::size_t>(l.plot_top + row) * static_cast<std::size_t>(image.width) +
                                static_cast<std::size_t>(l.plot_left)));
  const int plot_right = l.plot_left + l.plot_width, plot_bottom = l.plot_top + l.plot_height;
  canvas.frame(l.plot_left - 1, l.plot_top - 1, plot_right + 1, plot_bottom + 1, kInk);

  // x axis: ticks under the frame, labels centred on them, the axis name centred below.
  const double x_step = l.x_ticks.size() > 1 ? l.x_ticks[1] - l.x_ticks[0] : 0.0;
  for (double v : l.x_ticks) {
    const int x = l.x_of(v, figure);
    canvas.fill(x, plot_bottom + 1, x + 1, plot_bottom + 1 + kTickLength, kInk);
    const std::string label = tick_label(v, x_step);
    const int left = std::clamp(x - text_width(label) / 2, 0, std::max(0, image.width - text_width(label)));
    canvas.text(left, plot_bottom + 1 + kTickLength + kLabelGap, label, kInk);
  }
  canvas.text(l.plot_left + (l.plot_width - text_width(figure.x_label)) / 2,
              plot_bottom + 1 + kTickLength + kLabelGap + kGlyphHeight + 6, figure.x_label, kInk);
  // y axis: ticks left of the frame, labels right-aligned against them, the axis name further left.
  const double y_step = l.y_ticks.size() > 1 ? l.y_ticks[1] - l.y_ticks[0] : 0.0;
  for (double v : l.y_ticks) {
    const int yy = l.y_of(v, figure);
    canvas.fill(l.plot_left - 1 - kTickLength, yy, l.plot_left - 1, yy + 1, kInk);
    const std::string label = tick_label(v, y_step);
    canvas.text(l.plot_left - 1 - kTickLength - kLabelGap - text_width(label), yy - kGlyphHeight / 2, label, kInk);
  }
  canvas.text(kMargin, l.plot_top + (l.plot_height - kGlyphHeight) / 2, figure.y_label, kInk);

  // The colour bar: colour_map from 0 at its bottom row to 1 at its top row.
  const int bar_bottom = l.bar_top + l.bar_height - 1;
  for (int yy = l.bar_top; yy <= bar_bottom; ++yy) {
    const double t = l.bar_height > 1 ? static_cast<double>(bar_bottom - yy) / (l.bar_height - 1) : 0.0;
    canvas.fill(l.bar_left, yy, l.bar_left + l.bar_width, yy + 1, colour_map(t));
  }
  canvas.frame(l.bar_left - 1, l.bar_top - 1, l.bar_left + l.bar_width + 1, bar_bottom + 2, kInk);
  const double bar_step = l.bar_ticks.size() > 1 ? l.bar_ticks[1] - l.bar_ticks[0] : 0.0;
  const int bar_right = l.bar_left + l.bar_width + 1;
  for (double v : l.bar_ticks) {
    const int yy = l.bar_y(v);
    canvas.fill(bar_right, yy, bar_right + kTickLength, yy + 1, kInk);
    canvas.text(bar_right + kTickLength + kLabelGap, yy - kGlyphHeight / 2, tick_label(v, bar_step), kInk);
  }
  canvas.text(l.bar_left - 1, l.plot_top - 6 - kGlyphHeight, bar_label(figure, l.log_scale), kInk);
  canvas.text(l.bar_left - 1, bar_bottom + 2 + 6, "max " + sci_label(l.value_max), kInk);
  canvas.text(l.bar_left - 1, bar_bottom + 2 + 6 + kGlyphHeight + kLineSpacing, "min " + sci_label(l.value_min), kInk);
  return image;
}

}  // namespace korch::hydro
