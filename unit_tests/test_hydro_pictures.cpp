// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Pictures of the hydro app: the colour map of a field, PNG output read back with libpng, and the
// timeline of a trace (rows, time axis, legend).
#include <doctest/doctest.h>

#include <korch/error.hpp>
#include <korch/picture/canvas.hpp>
#include <korch/timeline.hpp>

#include "field_figure.hpp"
#include "image.hpp"
#include "test_picture_support.hpp"

#include <png.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace korch;
using namespace korch::hydro;
using korch::test::event;
using korch::test::pixel;
using korch::test::read_png_rgb;

namespace {

std::filesystem::path scratch_dir() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("korch-test-hydro-pictures-" + std::to_string(static_cast<long>(::getpid())));
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("render_field: lo gets the colour map's first colour, hi its last, NaN and inf are grey") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // 3 x 2 grid, j = 0 the bottom row.
  const std::vector<double> values{1.0, 3.0, nan, /* j = 1: */ 0.0, 5.0, inf};
  const Image image = render_field_scaled(values, 3, 2, 1.0, 3.0, 1);
  CHECK(image.width == 3);
  CHECK(image.height == 2);
  CHECK(image.rgb.size() == 18u);
  // Bottom row (j = 0) is image row 1.
  CHECK(pixel(image, 0, 1) == colour_map(0.0));
  CHECK(pixel(image, 1, 1) == colour_map(1.0));
  CHECK(pixel(image, 2, 1) == kNonFiniteGrey);
  // Top row: below lo clamps to lo, above hi clamps to hi, inf is grey.
  CHECK(pixel(image, 0, 0) == colour_map(0.0));
  CHECK(pixel(image, 1, 0) == colour_map(1.0));
  CHECK(pixel(image, 2, 0) == kNonFiniteGrey);
  CHECK(colour_map(0.0) != colour_map(1.0));
  CHECK(colour_map(0.5) != colour_map(0.0));
  CHECK(colour_map(-3.0) == colour_map(0.0));
  CHECK(colour_map(7.0) == colour_map(1.0));
}

TEST_CASE("render_field: lo == hi is allowed (values at lo get lo's colour, above it hi's)") {
  const Image image = render_field_scaled({2.0, 2.0, 3.0, 1.0}, 4, 1, 2.0, 2.0, 1);
  CHECK(pixel(image, 0, 0) == colour_map(0.0));
  CHECK(pixel(image, 1, 0) == colour_map(0.0));
  CHECK(pixel(image, 2, 0) == colour_map(1.0));
  CHECK(pixel(image, 3, 0) == colour_map(0.0));
}

TEST_CASE("render_field: small grids are scaled up by nearest neighbour to at least kMinFieldPixels") {
  std::vector<double> values(64 * 32);
  for (int j = 0; j < 32; ++j)
    for (int i = 0; i < 64; ++i) values[static_cast<std::size_t>(i + 64 * j)] = i + 100.0 * j;
  const Image image = render_field(values, 64, 32, 0.0, 3200.0);
  const int s = field_scale(64, 32);
  CHECK(s == 8);
  CHECK(image.width == 64 * s);
  CHECK(image.height == 32 * s);
  CHECK(image.width >= kMinFieldPixels);
  // Cell (i, j) covers columns [s i, s i + s) and rows [height - s (j+1), height - s j).
  for (int j : {0, 7, 31})
    for (int i : {0, 13, 63}) {
      const Rgb expected = colour_map((i + 100.0 * j) / 3200.0);
      CHECK(pixel(image, s * i, image.height - s * (j + 1)) == expected);
      CHECK(pixel(image, s * i + s - 1, image.height - 1 - s * j) == expected);
    }
  CHECK(field_scale(1024, 10) == 1);
  CHECK(field_scale(1, 1) == kMinFieldPixels);
}

TEST_CASE("render_field: wrong sizes and ranges are errors") {
  CHECK_THROWS_AS(render_field({1.0, 2.0}, 3, 1, 0.0, 1.0), korch::Error);
  CHECK_THROWS_AS(render_field({}, 0, 1, 0.0, 1.0), korch::Error);
  CHECK_THROWS_AS(render_field({1.0}, 1, 1, 1.0, 0.0), korch::Error);
  CHECK_THROWS_AS(render_field({1.0}, 1, 1, 0.0, std::numeric_limits<double>::infinity()), korch::Error);
}

TEST_CASE("append_colour_bar: the bar runs from lo's colour at the bottom to hi's at the top") {
  const Image field = render_field_scaled({0.0, 1.0, 2.0, 3.0}, 2, 2, 0.0, 3.0, 50);
  const Image barred = append_colour_bar(field);
  CHECK(barred.height == field.height);
  CHECK(barred.width > field.width);
  CHECK(pixel(barred, 0, 0) == pixel(field, 0, 0));
  const int x = barred.width - 12;
  CHECK(pixel(barred, x, 1) == colour_map(1.0 - 1.0 / (barred.height - 1)));
  CHECK(pixel(barred, x, barred.height - 2) == colour_map(1.0 / (barred.height - 1)));
  CHECK(finite_range({std::nan(""), 2.0, -1.0}) == std::array<double, 2>{-1.0, 2.0});
  CHECK(finite_range({std::nan("")}) == std::array<double, 2>{0.0, 0.0});
}

TEST_CASE("write_png: the file read back with libpng has the same pixels") {
  std::vector<double> values(17 * 9);
  for (std::size_t k = 0; k < values.size(); ++k) values[k] = std::sin(0.3 * static_cast<double>(k));
  values[5] = std::numeric_limits<double>::quiet_NaN();
  const Image image = render_field_scaled(values, 17, 9, -1.0, 1.0, 3);
  const auto dir = scratch_dir();
  const std::string path = (dir / "field.png").string();
  write_png(path, image);
  const Image back = read_png_rgb(path);
  CHECK(back.width == image.width);
  CHECK(back.height == image.height);
  CHECK(back.rgb == image.rgb);
  // No temporary file is left next to it.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);
  std::filesystem::remove_all(dir);
}

TEST_CASE("write_png: an unwritable path throws korch::Error naming the path and leaves no file") {
  const Image image = render_field_scaled({0.0, 1.0}, 2, 1, 0.0, 1.0, 1);
  const std::string path = "/nonexistent-korch-dir/sub/field.png";
  try {
    write_png(path, image);
    FAIL("write_png did not throw");
  } catch (const korch::Error& e) {
    CHECK(std::string(e.what()).find(path) != std::string::npos);
  }
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_THROWS_AS(write_png("/tmp/empty.png", Image{}), korch::Error);
}

namespace {

// The pixel in the middle of an event's box.
Rgb box_centre(const Image& image, const TimelineLayout& layout, const korch::TraceEvent& e) {
  const std::size_t r = layout.row_of(e.team, e.thread);
  REQUIRE(r < layout.rows.size());
  const int x = (layout.x_of(e.begin_ns) + layout.x_of(e.end_ns)) / 2;
  return pixel(image, x, layout.row_top(r) + kTimelineRowHeight / 2);
}

}  // namespace

TEST_CASE("render_timeline: one row per distinct (team, thread), boxes in their action's stable colour") {
  const std::vector<korch::TraceEvent> events{
      event("hydro_step", "task", "cpu", 0, 0, 4000),     event("hydro_step", "task", "cpu", 1, 500, 3000),
      event("diagnostics", "task", "cpu", 1, 3000, 6000), event("hydro_step", "task", "gpu", 0, 1000, 9000),
      event("pack", "helper", "mover", 0, 200, 1000),     event("host_to_device", "transfer", "mover", 0, 6000, 10000),
      event("diagnostics", "task", "cpu", 0, 4000, 8000), event("distribute", "distributor", "main", 0, 0, 200)};
  const TimelineLayout layout = timeline_layout(events, 800);
  REQUIRE(layout.rows.size() == 5);  // cpu/0, cpu/1, gpu/0, main/0, mover/0
  CHECK(layout.rows[0].team == "cpu");
  CHECK(layout.rows[1].thread == 1u);
  CHECK(layout.rows[4].team == "mover");
  CHECK(layout.names == std::vector<std::string>{"diagnostics", "distribute", "host_to_device", "hydro_step", "pack"});
  CHECK(layout.t0 == 0);
  CHECK(layout.t1 == 10000);
  const Image image = render_timeline(events, 800);
  CHECK(image.width == 800);
  CHECK(image.height == layout.height);
  CHECK(image.rgb.size() == 3u * 800u * static_cast<std::size_t>(image.height));
  CHECK(image.height > layout.row_top(5));
  // Tasks are drawn in their action's colour, the same on every row; the picture's colours are
  // distinct, and each is the name's stable colour unless an earlier name took its slot.
  REQUIRE(layout.colours.size() == layout.names.size());
  for (const korch::TraceEvent& e : events)
    if (e.category == "task") CHECK(box_centre(image, layout, e) == layout.colour_of(e.name));
  CHECK(layout.colours[0] == action_colour(layout.names[0]));
  for (std::size_t a = 0; a < layout.names.size(); ++a)
    for (std::size_t b = a + 1; b < layout.names.size(); ++b) CHECK(layout.colours[a] != layout.colours[b]);
  // The transfer is hatched: its box holds its colour and a darker one, and is thinner than the row.
  const korch::TraceEvent& transfer = events[5];
  const std::size_t r = layout.row_of("mover", 0);
  const int x = (layout.x_of(transfer.begin_ns) + layout.x_of(transfer.end_ns)) / 2;
  bool plain = false, hatched = false;
  for (int dx = 0; dx < 4; ++dx) {
    const Rgb c = pixel(image, x + dx, layout.row_top(r) + kTimelineRowHeight / 2);
    plain = plain || c == layout.colour_of("host_to_device");
    hatched = hatched || c != layout.colour_of("host_to_device");
  }
  CHECK(plain);
  CHECK(hatched);
  CHECK(pixel(image, x, layout.row_top(r)) != layout.colour_of("host_to_device"));
  // A row gap separates rows.
  CHECK(pixel(image, x, layout.row_top(r) - 1) == Rgb{255, 255, 255});
  // Kinds for the legend, a label per row, and a time axis in ms under the rows with a tick and a
  // label per tick value; a title above the rows when given.
  CHECK(layout.categories == std::vector<std::string>{"task", "distributor", "transfer", "task", "helper"});
  const Image titled = render_timeline(events, 800, "timeline title");
  const TimelineLayout tl = timeline_layout(events, 800, "timeline title");
  CHECK(tl.rows_top > layout.rows_top);
  CHECK(titled.height == tl.height);
  auto ink = [&](int x0, int y0, int x1, int y1) {
    int n = 0;
    for (int y = y0; y < y1; ++y)
      for (int xx = x0; xx < x1; ++xx) {
        const Rgb c = pixel(titled, xx, y);
        n += c[0] < 80 && c[1] < 80 && c[2] < 80;
      }
    return n;
  };
  CHECK(ink(0, tl.title_top, 800, tl.title_top + 14) > 100);
  for (std::size_t row = 0; row < tl.rows.size(); ++row)
    CHECK(ink(0, tl.row_top(row), tl.plot_left - 4, tl.row_top(row) + kTimelineRowHeight) > 10);
  CHECK(tl.axis_top >= tl.row_top(tl.rows.size() - 1) + kTimelineRowHeight);
  CHECK(tl.legend_top > tl.axis_top + 20);
  REQUIRE(tl.ticks_ms.size() >= 3);
  CHECK(tl.ticks_ms.front() == 0.0);
  CHECK(tl.ticks_ms.back() == doctest::Approx(0.01));  // the events span 10000 ns
  CHECK(ink(tl.plot_left, tl.axis_top, tl.plot_left + tl.plot_width, tl.axis_top + 1) == tl.plot_width);
  for (double ms : tl.ticks_ms) {
    const int tx = tl.x_of(tl.t0 + static_cast<std::int64_t>(std::llround(ms * 1e6)));
    CHECK(ink(tx, tl.axis_top + 1, tx + 1, tl.axis_top + 4) == 3);
  }
  CHECK(ink(tl.plot_left, tl.axis_top + 6, tl.plot_left + tl.plot_width, tl.axis_top + 26) > 100);
  CHECK(ink(0, tl.legend_top, 800, tl.height) > 100);
  // Colours are stable per name: the same in another picture, distinct for these names.
  const std::vector<korch::TraceEvent> other{event("diagnostics", "task", "x", 3, 0, 10)};
  const Image image2 = render_timeline(other, 400);
  const TimelineLayout layout2 = timeline_layout(other, 400);
  CHECK(layout2.rows.size() == 1);
  CHECK(box_centre(image2, layout2, other[0]) == action_colour("diagnostics"));
  CHECK(action_colour("hydro_step") == action_colour(std::string("hydro_") + "step"));
  // Up to kTimelinePalette names in one picture all get different colours.
  std::vector<korch::TraceEvent> many;
  for (int k = 0; k < kTimelinePalette; ++k)
    many.push_back(event("action" + std::to_string(k), "task", "t", 0, k, k + 1));
  const TimelineLayout many_layout = timeline_layout(many, 400);
  for (std::size_t a = 0; a < many_layout.colours.size(); ++a)
    for (std::size_t b = a + 1; b < many_layout.colours.size(); ++b)
      CHECK(many_layout.colours[a] != many_layout.colours[b]);
  for (int s = 0; s < kTimelinePalette; ++s)
    for (int t = s + 1; t < kTimelinePalette; ++t) CHECK(palette_colour(s) != palette_colour(t));
}

TEST_CASE("render_timeline: empty input gives a small blank image; zero-length events still show") {
  const Image blank = render_timeline({}, 1600);
  CHECK(blank.width > 0);
  CHECK(blank.height > 0);
  CHECK(blank.height <= 32);
  CHECK(std::all_of(blank.rgb.begin(), blank.rgb.end(), [](std::uint8_t v) { return v == 255; }));
  const std::vector<korch::TraceEvent> instant{event("A", "task", "t", 0, 50, 50)};
  const Image one = render_timeline(instant, 300);
  const TimelineLayout layout = timeline_layout(instant, 300);
  CHECK(layout.rows.size() == 1);
  CHECK(pixel(one, layout.x_of(50), layout.row_top(0) + 3) == action_colour("A"));
  // A picture of a timeline can be written.
  const auto dir = scratch_dir();
  write_png((dir / "timeline.png").string(), one);
  CHECK(std::filesystem::exists(dir / "timeline.png"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("pictures: a sample field figure and timeline are written and read back (also to $KORCH_TEST_PICTURES_DIR)") {
  std::vector<double> values(64 * 48);
  for (int j = 0; j < 48; ++j)
    for (int i = 0; i < 64; ++i)
      values[static_cast<std::size_t>(i + 64 * j)] =
          std::exp(-((i - 20) * (i - 20) + (j - 30) * (j - 30)) / 200.0) + 0.01 * i;
  values[100] = std::numeric_limits<double>::quiet_NaN();
  FieldFigure figure;
  figure.title = {"sample 2D, 64 x 48 cells, t = 1.000e-02", "a Gaussian bump on a ramp, one NaN cell"};
  figure.y_range = {0.0, 0.75};
  const Image field = render_field_figure(values, 64, 48, figure);
  figure.log_scale = true;
  const Image log_field = render_field_figure(values, 64, 48, figure);
  std::vector<korch::TraceEvent> events;
  const char* actions[] = {"hydro_step", "fill_guard_cells", "compute_dt", "diagnostics"};
  std::int64_t t = 0;
  for (int cycle = 0; cycle < 6; ++cycle, t += 20000) {
    for (unsigned thread = 0; thread < 4; ++thread) {
      std::int64_t at = t + 300 * thread;
      for (unsigned k = 0; k < 8; ++k, at += 2000 + 150 * ((k + thread) % 3))
        events.push_back(event(actions[(static_cast<unsigned>(cycle) + k) % 4], "task", thread < 2 ? "cpu" : "device",
                               thread % 2, at, at + 1900));
    }
    events.push_back(event("host_to_device", "transfer", "mover", 0, t + 1000, t + 4000));
    events.push_back(event("pack", "helper", "packer", 0, t, t + 900));
    events.push_back(event("distribute", "distributor", "main", 0, t, t + 300));
  }
  const Image timeline = render_timeline(events, 1200, "sample timeline");
  // Read back: the same pixels, and the timeline's time axis spans the 0.12 ms of events in ms.
  const auto dir = scratch_dir();
  const std::pair<const char*, const Image*> pictures[] = {
      {"sample_field.png", &field}, {"sample_field_log.png", &log_field}, {"sample_timeline.png", &timeline}};
  for (const auto& [name, image] : pictures) {
    write_png((dir / name).string(), *image);
    const Image back = read_png_rgb((dir / name).string());
    CHECK(back.width == image->width);
    CHECK(back.rgb == image->rgb);
  }
  const TimelineLayout layout = timeline_layout(events, 1200, "sample timeline");
  REQUIRE(layout.ticks_ms.size() >= 2);
  CHECK(layout.ticks_ms.front() == 0.0);
  CHECK(layout.ticks_ms.back() <= 1e-6 * static_cast<double>(layout.t1 - layout.t0) + 1e-12);
  CHECK(field.rgb != log_field.rgb);
  if (const char* out = std::getenv("KORCH_TEST_PICTURES_DIR"))
    for (const auto& [name, image] : pictures) write_png(std::string(out) + "/" + name, *image);
  std::filesystem::remove_all(dir);
}
