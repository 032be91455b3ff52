#include "timeline.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace korch::hydro {

namespace {

// The built-in 5x7 bitmap font: 7 rows of 5 bits (bit 4 the leftmost pixel), drawn for this project.
struct Glyph {
  char c;
  std::uint8_t rows[7];
};
constexpr Glyph kFont[] = {
    {'A', {0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}}, {'B', {0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e}},
    {'C', {0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e}}, {'D', {0x1e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x1e}},
    {'E', {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f}}, {'F', {0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10}},
    {'G', {0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f}}, {'H', {0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11}},
    {'I', {0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e}}, {'J', {0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0c}},
    {'K', {0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11}}, {'L', {0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f}},
    {'M', {0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11}}, {'N', {0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11}},
    {'O', {0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}}, {'P', {0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10}},
    {'Q', {0x0e, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0d}}, {'R', {0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11}},
    {'S', {0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e}}, {'T', {0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04}},
    {'U', {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e}}, {'V', {0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04}},
    {'W', {0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a}}, {'X', {0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11}},
    {'Y', {0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04}}, {'Z', {0x1f, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1f}},
    {'0', {0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e}}, {'1', {0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e}},
    {'2', {0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f}}, {'3', {0x1e, 0x01, 0x01, 0x0e, 0x01, 0x01, 0x1e}},
    {'4', {0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02}}, {'5', {0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e}},
    {'6', {0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e}}, {'7', {0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08}},
    {'8', {0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e}}, {'9', {0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c}},
    {'_', {0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1f}}, {'-', {0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00}},
    {'/', {0x01, 0x01, 0x02, 0x04, 0x08, 0x10, 0x10}}, {'.', {0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c}},
    {':', {0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00}}, {'#', {0x0a, 0x0a, 0x1f, 0x0a, 0x1f, 0x0a, 0x0a}},
};
constexpr int kGlyphAdvance = 6;  // 5 px glyph + 1 px space

const Glyph* find_glyph(char c) {
  if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  for (const Glyph& g : kFont)
    if (g.c == c) return &g;
  return nullptr;
}

class Canvas {
 public:
  explicit Canvas(Image& image) : image_(image) {}
  void set(int x, int y, const Rgb& c) {
    if (x < 0 || y < 0 || x >= image_.width || y >= image_.height) return;
    std::uint8_t* p = image_.rgb.data() + 3 * (static_cast<std::size_t>(y) * static_cast<std::size_t>(image_.width) +
                                               static_cast<std::size_t>(x));
    p[0] = c[0];
    p[1] = c[1];
    p[2] = c[2];
  }
  void fill(int x0, int y0, int x1, int y1, const Rgb& c) {  // [x0, x1) x [y0, y1)
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) set(x, y, c);
  }
  // Text from (x, y) top-left, at most max_chars characters; unknown characters (not space) drawn as a box.
  void text(int x, int y, const std::string& s, std::size_t max_chars, const Rgb& c) {
    for (std::size_t k = 0; k < s.size() && k < max_chars; ++k, x += kGlyphAdvance) {
      if (s[k] == ' ') continue;
      const Glyph* g = find_glyph(s[k]);
      for (int row = 0; row < 7; ++row)
        for (int col = 0; col < 5; ++col) {
          const bool on = g ? ((g->rows[row] >> (4 - col)) & 1) != 0 : (row == 0 || row == 6 || col == 0 || col == 4);
          if (on) set(x + col, y + row, c);
        }
    }
  }

 private:
  Image& image_;
};

Rgb darker(const Rgb& c, double f) {
  return {static_cast<std::uint8_t>(c[0] * f), static_cast<std::uint8_t>(c[1] * f),
          static_cast<std::uint8_t>(c[2] * f)};
}

std::string row_label(const TimelineRow& row) { return row.team + "/" + std::to_string(row.thread); }

constexpr int kMargin = 8;
constexpr int kSwatchWidth = 16, kSwatchHeight = 12, kLegendLine = 16;

// Lays the legend out from (x0, y0) within `width`; calls place(name index, x, y) for each swatch.
template <class Place>
int layout_legend(const std::vector<std::string>& names, int width, int y0, Place&& place) {
  int x = kMargin, y = y0;
  const std::size_t max_chars =
      static_cast<std::size_t>(std::max(1, (width - 2 * kMargin - kSwatchWidth - 4) / kGlyphAdvance));
  for (std::size_t k = 0; k < names.size(); ++k) {
    const int chars = static_cast<int>(std::min(names[k].size(), max_chars));
    const int item = kSwatchWidth + 4 + chars * kGlyphAdvance + 12;
    if (x > kMargin && x + item > width - kMargin) {
      x = kMargin;
      y += kLegendLine;
    }
    place(k, x, y, max_chars);
    x += item;
  }
  return names.empty() ? y0 : y + kLegendLine;
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

std::size_t TimelineLayout::row_of(const std::string& team, unsigned thread) const {
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (rows[r].team == team && rows[r].thread == thread) return r;
  return rows.size();
}

TimelineLayout timeline_layout(const std::vector<korch::TraceEvent>& events, int width) {
  TimelineLayout layout;
  layout.width = std::max(width, 200);
  if (events.empty()) {
    layout.height = 16;
    layout.plot_left = kMargin;
    layout.plot_width = layout.width - 2 * kMargin;
    return layout;
  }
  std::set<std::pair<std::string, unsigned>> rows;
  std::set<std::string> names;
  layout.t0 = events.front().begin_ns;
  layout.t1 = events.front().end_ns;
  for (const korch::TraceEvent& e : events) {
    rows.emplace(e.team, e.thread);
    names.insert(e.name);
    layout.t0 = std::min({layout.t0, e.begin_ns, e.end_ns});
    layout.t1 = std::max({layout.t1, e.begin_ns, e.end_ns});
  }
  if (layout.t1 <= layout.t0) layout.t1 = layout.t0 + 1;
  std::size_t label_chars = 0;
  for (const auto& [team, thread] : rows) {
    layout.rows.push_back({team, thread});
    label_chars = std::max(label_chars, row_label(layout.rows.back()).size());
  }
  layout.names.assign(names.begin(), names.end());
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
  layout.rows_top = kMargin;
  const int rows_bottom = layout.row_top(layout.rows.size()) - kTimelineRowGap;
  layout.legend_top = rows_bottom + 10;
  const int legend_bottom =
      layout_legend(layout.names, layout.width, layout.legend_top, [](std::size_t, int, int, std::size_t) {});
  layout.height = legend_bottom + kMargin;
  return layout;
}

Image render_timeline(const std::vector<korch::TraceEvent>& events, int width) {
  const TimelineLayout layout = timeline_layout(events, width);
  Image image;
  image.width = layout.width;
  image.height = layout.height;
  image.rgb.assign(3 * static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height), 255);
  if (events.empty()) return image;
  Canvas canvas(image);
  const Rgb band{236, 236, 236}, ink{30, 30, 30};
  const std::size_t label_chars = static_cast<std::size_t>((layout.plot_left - 2 * kMargin) / kGlyphAdvance);
  for (std::size_t r = 0; r < layout.rows.size(); ++r) {
    const int top = layout.row_top(r);
    canvas.fill(layout.plot_left, top, layout.plot_left + layout.plot_width, top + kTimelineRowHeight, band);
    canvas.text(kMargin, top + (kTimelineRowHeight - 7) / 2, row_label(layout.rows[r]), label_chars, ink);
  }
  std::map<std::string, Rgb> colours;
  for (std::size_t k = 0; k < layout.names.size(); ++k) colours[layout.names[k]] = layout.colours[k];
  for (const korch::TraceEvent& e : events) {
    const std::size_t r = layout.row_of(e.team, e.thread);
    const int top = layout.row_top(r);
    const int x0 = layout.x_of(std::min(e.begin_ns, e.end_ns));
    const int x1 = std::max(x0 + 1, layout.x_of(std::max(e.begin_ns, e.end_ns)));
    const Rgb colour = colours[e.name];
    int y0 = top, y1 = top + kTimelineRowHeight;
    const bool transfer = e.category == "transfer";
    if (transfer || e.category == "helper") {
      y0 = top + kTimelineRowHeight / 4;
      y1 = y0 + kTimelineRowHeight / 2;
    } else if (e.category == "distributor") {
      y0 = top + (3 * kTimelineRowHeight) / 8;
      y1 = y0 + kTimelineRowHeight / 4;
    }
    canvas.fill(x0, y0, x1, y1, colour);
    if (transfer) {
      const Rgb hatch = darker(colour, 0.55);
      for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x)
          if ((x + y) % 4 == 0) canvas.set(x, y, hatch);
    } else if (y1 - y0 == kTimelineRowHeight && x1 - x0 >= 4) {
      canvas.fill(x1 - 1, y0, x1, y1, darker(colour, 0.6));
    }
  }
  const Rgb frame{0, 0, 0};
  layout_legend(layout.names, layout.width, layout.legend_top, [&](std::size_t k, int x, int y, std::size_t max_chars) {
    canvas.fill(x, y, x + kSwatchWidth, y + kSwatchHeight, frame);
    canvas.fill(x + 1, y + 1, x + kSwatchWidth - 1, y + kSwatchHeight - 1, colours[layout.names[k]]);
    canvas.text(x + kSwatchWidth + 4, y + (kSwatchHeight - 7) / 2, layout.names[k], max_chars, ink);
  });
  return image;
}

}  // namespace korch::hydro
