// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The timeline picture of a trace (like the seed's task-based timing figure): one row per team
// thread, one box per event, time on x. write_timeline_png draws a Trace (or a list of its events,
// e.g. merged over ranks by merged_trace.hpp) into a PNG file; render_timeline gives the Image.
//
// Layout, top to bottom: an 8 px margin; the title (when given, at twice the font size); the
// header "team/thread" of the label column; one row per distinct (rank, team, thread) (the rank is
// TraceEvent::process), ordered by rank, team name, then thread index, each kTimelineRowHeight px
// tall on a light grey band with a kTimelineRowGap px white gap between rows; the time axis (ticks
// labelled in ms since the first event, faint lines at the ticks across the rows); then the
// legend. Left of the rows, each row's "team/thread" label ("rank R: team/thread" when the events
// come from more than one rank), in the bitmap font of picture/canvas.hpp.
// Boxes: x from the event's begin to its end, scaled so that the earliest begin is the left edge
// of the plot and the latest end its right edge (at least 1 px wide). Each box has its action's
// colour: one of kTimelinePalette distinct colours, the slot chosen from a hash of the name
// (action_colour(name)), so a name keeps its colour across pictures and runs; when two names of
// one picture hash to the same slot, the later name (alphabetically) takes the next free slot
// (TimelineLayout::colours), so up to kTimelinePalette names are always told apart. By category:
//   task        — the full row height, with a 1 px darker right edge so that back-to-back tasks
//                 stay apart;
//   transfer    — the middle half of the row height, hatched (every 4th diagonal darker);
//   helper      — the middle half of the row height, plain;
//   distributor — the middle quarter of the row height, plain;
//   anything else is drawn like a task.
// Legend: one swatch (16 x 12 px, black frame, the box drawn as in the rows: full for tasks,
// hatched for transfers) per distinct name, in alphabetical order of the names, left to right and
// wrapping to new lines, each followed by its name, with its kind in parentheses unless a task
// ("host_to_device (transfer)"); a name's kind is that of its first event.
#pragma once

#include <korch/picture/image.hpp>
#include <korch/trace.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace korch {

inline constexpr int kTimelineRowHeight = 18;
inline constexpr int kTimelineRowGap = 2;

inline constexpr int kTimelinePalette = 16;
inline constexpr const char* kTimelineRowHeader = "team/thread";

// Colour number `slot` (mod kTimelinePalette) of the timeline's palette (16 colours picked for this
// project: 8 strong ones, then 8 darker or off-tone ones; never white, grey or black).
Rgb palette_colour(int slot);

// The stable colour of an action name: palette_colour(hash(name) % kTimelinePalette).
Rgb action_colour(const std::string& name);

struct TimelineRow {
  std::string team;
  unsigned thread = 0;
  int process = 0;  // the rank that recorded the row's events
};

// Where render_timeline puts things, for callers and tests.
struct TimelineLayout {
  int width = 0, height = 0;
  std::vector<TimelineRow> rows;        // sorted by (process, team, thread)
  bool ranks = false;                   // events of more than one process: rows labelled with their rank
  std::vector<std::string> names;       // distinct event names, sorted: the legend order
  std::vector<std::string> categories;  // categories[k]: the kind of names[k] (task, transfer, ...)
  std::vector<Rgb> colours;             // colours[k]: the colour of names[k] in this picture
  int plot_left = 0, plot_width = 0;
  int title_top = 0;
  int rows_top = 0;
  int axis_top = 0;              // pixel row of the time axis' line
  std::vector<double> ticks_ms;  // time ticks, ms since t0
  std::int64_t t0 = 0, t1 = 1;   // time range in ns mapped to [plot_left, plot_left + plot_width)
  int legend_top = 0;
  // Top pixel row of row r.
  int row_top(std::size_t r) const { return rows_top + static_cast<int>(r) * (kTimelineRowHeight + kTimelineRowGap); }
  // Pixel column of time ns (clamped to the plot).
  int x_of(std::int64_t ns) const;
  // Index of the row of (team, thread) of rank `process`, or rows.size() when absent.
  std::size_t row_of(const std::string& team, unsigned thread, int process = 0) const;
  // The colour of `name` in this picture (white when absent).
  Rgb colour_of(const std::string& name) const;
};

// The layout of the timeline of `events` in an image `width` px wide (at least 200; smaller widths
// are raised to 200).
TimelineLayout timeline_layout(const std::vector<korch::TraceEvent>& events, int width = 1600,
                               const std::string& title = "");

// The picture; empty input gives a small blank (white) image of 200 x 16 px.
Image render_timeline(const std::vector<korch::TraceEvent>& events, int width = 1600, const std::string& title = "");

// What write_timeline_png draws and where.
struct TimelineOptions {
  std::string title;  // drawn above the rows (at twice the font size) when not empty
  int width = 1600;   // px; at least 200
  // A time window on the trace's clock (TraceEvent::begin_ns, end_ns): when window_end_ns >
  // window_begin_ns, only the events that overlap [window_begin_ns, window_end_ns) are drawn, cut
  // to the window.
  std::int64_t window_begin_ns = 0, window_end_ns = 0;
  // When > 0: only the last `last_ns` nanoseconds before the latest end (within the window, if any).
  std::int64_t last_ns = 0;
};

// The events the options select: those overlapping the window and the last `last_ns`, cut to them.
std::vector<TraceEvent> timeline_events(const std::vector<TraceEvent>& events, const TimelineOptions& options);

// Draws the timeline of `events` (selected by timeline_events) and writes it as a PNG to `path`,
// atomically (write_png). Throws korch::Error naming the path when it cannot be written, or when
// options.window_end_ns < options.window_begin_ns or options.last_ns < 0.
void write_timeline_png(const std::vector<TraceEvent>& events, const std::string& path,
                        const TimelineOptions& options = {});
// The same for every event of `trace` (Trace::events()).
void write_timeline_png(const Trace& trace, const std::string& path, const TimelineOptions& options = {});

}  // namespace korch
