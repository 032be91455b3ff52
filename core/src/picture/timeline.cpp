// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <korch/timeline.hpp>

#include <korch/picture/axis.hpp>
#include <korch/error.hpp>
#include <korch/picture/canvas.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace korch {

namespace {

Rgb darker(const Rgb& c, double f) {
  return {static_cast<std::uint8_t>(c[0] * f), static_cast<std::uint8_t>(c[1] * f),
          static_cast<std::uint8_t>(c[2] * f)};
}

std::string row_label(const TimelineRow& row, bool ranks) {
  const std::string label = row.team + "/" + std::to_string(row.thread);
  return ranks ? "rank " + std::to_string(row.process) + ": " + label : label;
}

constexpr int kMargin = 8;
constexpr int kSwatchWidth = 16, kSwatchHeight = 12, kLegendLine = 16;
constexpr int kTitleScale = 2;
constexpr int kTickLength = 4;
const Rgb kInk{30, 30, 30};

// The legend's text for a name: actions (tasks) by name, other kinds with their kind.
std::string legend_text(const std::string& name, const std::string& category) {
  return category == "task" || category.empty() ? name : name + " (" + category + ")";
}

// Lays the legend out from (kMargin, y0) within `width`; calls place(item, x, y, max_chars) for
// each swatch and returns the y below the last legend line.
template <class Place>
int layout_legend(const std::vector<std::string>& texts, int width, int y0, Place&& place) {
  int x = kMargin, y = y0;
  const std::size_t max_chars =
      static_cast<std::size_t>(std::max(1, (width - 2 * kMargin - kSwatchWidth - 4) / kGlyphAdvance));
  for (std::size_t k = 0; k < texts.size(); ++k) {
    const int chars = static_cast<int>(std::min(texts[k].size(), max_chars));
    const int item = kSwatchWidth + 4 + chars * kGlyphAdvance + 12;
    if (x > kMargin && x + item > width - kMargin) {
      x = kMargin;
      y += kLegendLine;
    }
    place(k, x, y, max_chars);
    x += item;
  }
  return texts.empty() ? y0 : y + kLegendLine;
}

std::vector<std::string> legend_texts(const TimelineLayout& layout) {
  std::vector<std::string> texts;
  for (std::size_t k = 0; k < layout.names.size(); ++k)
    texts.push_back(legend_text(layout.names[k], layout.categories[k]));
  return texts;
}

// A box of an event's kind: tasks the full height of [y0, y1), transfers and helpers the middle
// half (transfers hatched), distributors the middle quarter.
void draw_event_box(Canvas& canvas, int x0, int x1, int top, int height, const Rgb& colour, const std::string& category,
                    bool edge) {
  int y0 = top, y1 = top + height;
  const bool transfer = category == "transfer";
  if (transfer || category == "helper") {
    y0 = top + height / 4;
    y1 = y0 + height / 2;
  } else if (category == "distributor") {
    y0 = top + (3 * height) / 8;
    y1 = y0 + height / 4;
  }
  canvas.fill(x0, y0, x1, y1, colour);
  if (transfer) {
    const Rgb hatch = darker(colour, 0.55);
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x)
        if ((x + y) % 4 == 0) canvas.set(x, y, hatch);
  } else if (edge && y1 - y0 == height && x1 - x0 >= 4) {
    canvas.fill(x1 - 1, y0, x1, y1, darker(colour, 0.6));
  }
}

}  // namespace

namespace {

std::uint64_t name_hash(const std::string& name) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a, then a final mix
  for (unsigned char ch : name) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return h;
}

// The events drawn as boxes: all but the counters (bytes moved per step), which have no duration.
std::vector<korch::TraceEvent> spans_of(const std::vector<korch::TraceEvent>& events) {
  std::vector<korch::TraceEvent> spans;
  spans.reserve(events.size());
  for (const korch::TraceEvent& e : events)
    if (!korch::is_bytes_counter(e)) spans.push_back(e);
  return spans;
}

int name_slot(const std::string& name) { return static_cast<int>(name_hash(name) % kTimelinePalette); }

}  // namespace

Rgb palette_colour(int slot) {
  // Picked by hand for this project: 8 strong colours, then 8 darker or off-tone ones.
  static constexpr Rgb palette[kTimelinePalette] = {
      Rgb{220, 60, 50},  Rgb{60, 110, 220},  Rgb{245, 150, 40}, Rgb{70, 170, 70},  Rgb{150, 80, 200}, Rgb{235, 205, 50},
      Rgb{60, 190, 200}, Rgb{230, 110, 180}, Rgb{140, 60, 40},  Rgb{40, 50, 130},  Rgb{140, 140, 40}, Rgb{30, 100, 60},
      Rgb{100, 40, 100}, Rgb{190, 160, 110}, Rgb{30, 120, 130}, Rgb{160, 215, 80},
  };
  return palette[((slot % kTimelinePalette) + kTimelinePalette) % kTimelinePalette];
}

Rgb action_colour(const std::string& name) { return palette_colour(name_slot(name)); }

Rgb TimelineLayout::colour_of(const std::string& name) const {
  for (std::size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return colours[k];
  return {255, 255, 255};
}

int TimelineLayout::x_of(std::int64_t ns) const {
  const double f = static_cast<double>(ns - t0) / static_cast<double>(t1 - t0);
  const int x = plot_left + static_cast<int>(std::floor(f * plot_width));
  return std::clamp(x, plot_left, plot_left + plot_width - 1);
}

std::size_t TimelineLayout::row_of(const std::string& team, unsigned thread, int process) const {
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (rows[r].team == team && rows[r].thread == thread && rows[r].process == process) return r;
  return rows.size();
}

TimelineLayout timeline_layout(const std::vector<korch::TraceEvent>& all, int width, const std::string& title) {
  const std::vector<korch::TraceEvent> events = spans_of(all);
  TimelineLayout layout;
  layout.width = std::max(width, 200);
  if (events.empty()) {
    layout.height = 16;
    layout.plot_left = kMargin;
    layout.plot_width = layout.width - 2 * kMargin;
    return layout;
  }
  std::set<std::tuple<int, std::string, unsigned>> rows;
  std::map<std::string, std::string> category_of;  // the first category seen for each name
  layout.t0 = events.front().begin_ns;
  layout.t1 = events.front().end_ns;
  for (const korch::TraceEvent& e : events) {
    rows.emplace(e.process, e.team, e.thread);
    category_of.emplace(e.name, e.category);
    layout.t0 = std::min({layout.t0, e.begin_ns, e.end_ns});
    layout.t1 = std::max({layout.t1, e.begin_ns, e.end_ns});
  }
  if (layout.t1 <= layout.t0) layout.t1 = layout.t0 + 1;
  std::size_t label_chars = std::string(kTimelineRowHeader).size();
  layout.ranks = std::get<0>(*rows.begin()) != std::get<0>(*rows.rbegin());
  for (const auto& [process, team, thread] : rows) {
    layout.rows.push_back({team, thread, process});
    label_chars = std::max(label_chars, row_label(layout.rows.back(), layout.ranks).size());
  }
  for (const auto& [name, category] : category_of) {
    layout.names.push_back(name);
    layout.categories.push_back(category);
  }
  std::vector<bool> used(kTimelinePalette, false);
  std::size_t used_count = 0;
  for (const std::string& name : layout.names) {
    int slot = name_slot(name);
    if (used_count < used.size())
      while (used[static_cast<std::size_t>(slot)]) slot = (slot + 1) % kTimelinePalette;
    if (!used[static_cast<std::size_t>(slot)]) {
      used[static_cast<std::size_t>(slot)] = true;
      ++used_count;
    }
    layout.colours.push_back(palette_colour(slot));
  }
  const int label_width = std::min(static_cast<int>(label_chars) * kGlyphAdvance, layout.width / 4);
  layout.plot_left = kMargin + label_width + kMargin;
  layout.plot_width = std::max(1, layout.width - layout.plot_left - kMargin);
  layout.title_top = kMargin;
  const int title_height = title.empty() ? 0 : kGlyphHeight * kTitleScale + 8;
  // The row header line ("team/thread") sits between the title and the first row.
  layout.rows_top = kMargin + title_height + kGlyphHeight + 5;
  const int rows_bottom = layout.row_top(layout.rows.size()) - kTimelineRowGap;
  layout.axis_top = rows_bottom + 2;
  const double span_ms = 1e-6 * static_cast<double>(layout.t1 - layout.t0);
  layout.ticks_ms = nice_ticks(0.0, span_ms, std::clamp(layout.plot_width / 110, 2, 12));
  const int axis_bottom = layout.axis_top + 1 + kTickLength + 3 + kGlyphHeight + 5 + kGlyphHeight;
  layout.legend_top = axis_bottom + 10;
  const int legend_bottom =
      layout_legend(legend_texts(layout), layout.width, layout.legend_top, [](std::size_t, int, int, std::size_t) {});
  layout.height = legend_bottom + kMargin;
  return layout;
}

Image render_timeline(const std::vector<korch::TraceEvent>& all, int width, const std::string& title) {
  const std::vector<korch::TraceEvent> events = spans_of(all);
  const TimelineLayout layout = timeline_layout(events, width, title);
  Image image = blank_image(layout.width, layout.height);
  if (events.empty()) return image;
  Canvas canvas(image);
  const Rgb band{236, 236, 236}, grid_line{205, 205, 205};
  if (!title.empty()) {
    const std::size_t title_chars =
        static_cast<std::size_t>((layout.width - 2 * kMargin) / (kGlyphAdvance * kTitleScale));
    canvas.text(kMargin, layout.title_top, title, kInk, kTitleScale, title_chars);
  }
  const std::size_t label_chars = static_cast<std::size_t>((layout.plot_left - 2 * kMargin) / kGlyphAdvance);
  canvas.text(kMargin, layout.rows_top - kGlyphHeight - 4, kTimelineRowHeader, kInk, 1, label_chars);
  for (std::size_t r = 0; r < layout.rows.size(); ++r) {
    const int top = layout.row_top(r);
    canvas.fill(layout.plot_left, top, layout.plot_left + layout.plot_width, top + kTimelineRowHeight, band);
    canvas.text(kMargin, top + (kTimelineRowHeight - kGlyphHeight) / 2, row_label(layout.rows[r], layout.ranks), kInk,
                1, label_chars);
  }
  // Faint vertical lines at the time ticks, under the boxes, so that durations can be read off.
  auto tick_x = [&](double ms) { return layout.x_of(layout.t0 + static_cast<std::int64_t>(std::llround(ms * 1e6))); };
  for (double ms : layout.ticks_ms)
    for (std::size_t r = 0; r < layout.rows.size(); ++r) {
      const int top = layout.row_top(r);
      canvas.fill(tick_x(ms), top, tick_x(ms) + 1, top + kTimelineRowHeight, grid_line);
    }
  std::map<std::string, Rgb> colours;
  for (std::size_t k = 0; k < layout.names.size(); ++k) colours[layout.names[k]] = layout.colours[k];
  for (const korch::TraceEvent& e : events) {
    const int top = layout.row_top(layout.row_of(e.team, e.thread, e.process));
    const int x0 = layout.x_of(std::min(e.begin_ns, e.end_ns));
    const int x1 = std::max(x0 + 1, layout.x_of(std::max(e.begin_ns, e.end_ns)));
    draw_event_box(canvas, x0, x1, top, kTimelineRowHeight, colours[e.name], e.category, true);
  }
  // The time axis under the rows: a line, ticks, labels in ms and the axis name.
  const int axis = layout.axis_top;
  canvas.fill(layout.plot_left, axis, layout.plot_left + layout.plot_width, axis + 1, kInk);
  const double step = layout.ticks_ms.size() > 1 ? layout.ticks_ms[1] - layout.ticks_ms[0] : 0.0;
  for (double ms : layout.ticks_ms) {
    const int x = tick_x(ms);
    canvas.fill(x, axis + 1, x + 1, axis + 1 + kTickLength, kInk);
    const std::string label = tick_label(ms, step);
    const int left = std::clamp(x - text_width(label) / 2, 0, std::max(0, layout.width - text_width(label)));
    canvas.text(left, axis + 1 + kTickLength + 3, label, kInk);
  }
  const std::string axis_name = "time since the first event [ms]";
  canvas.text(layout.plot_left + (layout.plot_width - text_width(axis_name)) / 2,
              axis + 1 + kTickLength + 3 + kGlyphHeight + 5, axis_name, kInk);
  const Rgb frame{0, 0, 0};
  const std::vector<std::string> texts = legend_texts(layout);
  layout_legend(texts, layout.width, layout.legend_top, [&](std::size_t k, int x, int y, std::size_t max_chars) {
    canvas.fill(x, y, x + kSwatchWidth, y + kSwatchHeight, frame);
    canvas.fill(x + 1, y + 1, x + kSwatchWidth - 1, y + kSwatchHeight - 1, Rgb{255, 255, 255});
    draw_event_box(canvas, x + 1, x + kSwatchWidth - 1, y + 1, kSwatchHeight - 2, colours[layout.names[k]],
                   layout.categories[k], false);
    canvas.text(x + kSwatchWidth + 4, y + (kSwatchHeight - kGlyphHeight) / 2, texts[k], kInk, 1, max_chars);
  });
  return image;
}

std::vector<TraceEvent> timeline_events(const std::vector<TraceEvent>& events, const TimelineOptions& options) {
  std::int64_t lo = std::numeric_limits<std::int64_t>::min(), hi = std::numeric_limits<std::int64_t>::max();
  if (options.window_end_ns > options.window_begin_ns) {
    lo = options.window_begin_ns;
    hi = options.window_end_ns;
  }
  auto inside = [&](const TraceEvent& e) {
    return std::max(e.begin_ns, e.end_ns) >= lo && std::min(e.begin_ns, e.end_ns) < hi;
  };
  if (options.last_ns > 0) {
    bool any = false;
    std::int64_t latest = 0;
    for (const TraceEvent& e : events)
      if (inside(e) && !is_bytes_counter(e)) {
        latest = any ? std::max(latest, std::min(hi, std::max(e.begin_ns, e.end_ns)))
                     : std::min(hi, std::max(e.begin_ns, e.end_ns));
        any = true;
      }
    if (!any) return {};
    lo = std::max(lo, latest - options.last_ns);
  }
  std::vector<TraceEvent> selected;
  for (const TraceEvent& e : events) {
    if (!inside(e) || is_bytes_counter(e)) continue;
    TraceEvent cut = e;
    cut.begin_ns = std::clamp(std::min(e.begin_ns, e.end_ns), lo, hi);
    cut.end_ns = std::clamp(std::max(e.begin_ns, e.end_ns), lo, hi);
    selected.push_back(std::move(cut));
  }
  return selected;
}

void write_timeline_png(const std::vector<TraceEvent>& events, const std::string& path,
                        const TimelineOptions& options) {
  if (options.window_end_ns < options.window_begin_ns || options.last_ns < 0)
    throw Error::format(
        "write_timeline_png '{}': the window [{}, {}) ns with last_ns = {} is not a time window: give "
        "window_end_ns >= window_begin_ns (both 0 for the whole trace) and last_ns >= 0",
        path, options.window_begin_ns, options.window_end_ns, options.last_ns);
  write_png(path, render_timeline(timeline_events(events, options), options.width, options.title));
}

void write_timeline_png(const Trace& trace, const std::string& path, const TimelineOptions& options) {
  write_timeline_png(trace.events(), path, options);
}

}  // namespace korch
