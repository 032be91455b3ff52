// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The library's trace outputs: the timeline picture of a trace as a PNG file, and one Chrome trace
// merged over the ranks of a communicator (run as one process and under mpirun -np 2), and the
// events of a run's last few cycles.
#include <doctest/doctest.h>

#include <korch/communicator.hpp>
#include <korch/error.hpp>
#include <korch/merged_trace.hpp>
#include <korch/recent_cycles.hpp>
#include <korch/timeline.hpp>

#include "test_picture_support.hpp"

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using korch::test::event;
using korch::test::pixel;
using korch::test::read_png_rgb;

// A fresh folder of this process (every rank has its own).
fs::path scratch_dir() {
  const auto dir =
      fs::temp_directory_path() / ("korch-test-trace-outputs-" + std::to_string(static_cast<long>(::getpid())));
  fs::create_directories(dir);
  return dir;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE(
    "write_timeline_png: a small trace becomes a PNG of the layout's size, each task box in its action's colour") {
  korch::Trace trace;
  trace.record(event("advect", "task", "cpu", 0, 0, 600000));
  trace.record(event("advect", "task", "cpu", 1, 100000, 500000));
  trace.record(event("pack", "helper", "mover", 0, 600000, 800000));
  trace.record(event("host_to_device", "transfer", "mover", 0, 800000, 1000000));
  const fs::path dir = scratch_dir();
  const std::string path = (dir / "timeline.png").string();
  korch::TimelineOptions options;
  options.title = "two threads";
  options.width = 640;
  korch::write_timeline_png(trace, path, options);

  REQUIRE(fs::exists(path));
  const korch::Image image = read_png_rgb(path);
  const korch::TimelineLayout layout = korch::timeline_layout(trace.events(), 640, "two threads");
  CHECK(image.width == 640);
  CHECK(image.height == layout.height);
  REQUIRE(layout.rows.size() == 3);  // cpu/0, cpu/1, mover/0
  // The middle of cpu/0's advect box has advect's stable colour; cpu/1 is idle at its end (grey band).
  const int y0 = layout.row_top(layout.row_of("cpu", 0)) + korch::kTimelineRowHeight / 2;
  CHECK(pixel(image, layout.x_of(300000), y0) == korch::action_colour("advect"));
  const int y1 = layout.row_top(layout.row_of("cpu", 1)) + korch::kTimelineRowHeight / 2;
  CHECK(pixel(image, layout.x_of(930000), y1) == korch::Rgb{236, 236, 236});
  // Written under a temporary name and renamed: nothing else is left in the folder.
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);

  // A window keeps the events that overlap it, cut to it: the picture's time axis spans the window.
  korch::TimelineOptions window;
  window.window_begin_ns = 550000;
  window.window_end_ns = 900000;
  const auto selected = korch::timeline_events(trace.events(), window);
  REQUIRE(selected.size() == 3);  // the second advect ends before the window
  CHECK(selected[0].begin_ns == 550000);
  CHECK(selected[2].end_ns == 900000);
  korch::TimelineOptions last;
  last.last_ns = 100000;
  REQUIRE(korch::timeline_events(trace.events(), last).size() == 1);  // only host_to_device
  korch::write_timeline_png(trace, path, window);
  CHECK(read_png_rgb(path).height == korch::timeline_layout(selected, 1600).height);
  fs::remove_all(dir);
}

TEST_CASE("write_timeline_png: an unwritable path or a reversed window is a korch::Error naming the path") {
  korch::Trace trace;
  trace.record(event("advect", "task", "cpu", 0, 0, 1000));
  const std::string bad = "/nonexistent-korch-dir/sub/timeline.png";
  CHECK_THROWS_WITH_AS(korch::write_timeline_png(trace, bad), doctest::Contains(bad.c_str()), korch::Error);
  CHECK_FALSE(fs::exists(bad));
  korch::TimelineOptions reversed;
  reversed.window_begin_ns = 10;
  reversed.window_end_ns = 5;
  CHECK_THROWS_WITH_AS(korch::write_timeline_png(trace, "t.png", reversed), doctest::Contains("'t.png'"), korch::Error);
  CHECK_THROWS_WITH_AS(korch::write_chrome_trace(trace.events(), "/nonexistent-korch-dir/t.json"),
                       doctest::Contains("/nonexistent-korch-dir/t.json"), korch::Error);
}

TEST_CASE("write_merged_chrome_trace: rank 0 writes one valid Chrome trace holding every rank's events, pid per rank") {
  const korch::Communicator comm = korch::Communicator::world();
  korch::Trace trace;
  const std::string mine = "work on rank " + std::to_string(comm.rank());
  trace.record(event(mine, "task", "cpu", 0, 1000, 2000));
  trace.record(event("exchange", "communication", "main", 0, 2000, 3000));
  // One path for every rank: rank 0's folder.
  const fs::path dir = scratch_dir();
  const std::string path = comm.all_gather((dir / "trace.json").string())[0];
  korch::write_merged_chrome_trace(trace, comm, path);
  comm.barrier();
  if (comm.rank() == 0) {
    REQUIRE(fs::exists(path));
    const std::string text = read_text(path);
    if (comm.size() == 1) CHECK(text == trace.to_chrome_json());  // one process: the plain trace
    const auto json = nlohmann::json::parse(text);
    std::set<int> pids, process_names;
    std::set<std::string> names;
    for (const auto& e : json.at("traceEvents")) {
      if (e.at("ph") == "X") {
        pids.insert(e.at("pid").get<int>());
        names.insert(e.at("name").get<std::string>());
      } else if (e.at("name") == "process_name") {
        process_names.insert(e.at("pid").get<int>());
      }
    }
    CHECK(static_cast<int>(pids.size()) == comm.size());
    CHECK(process_names == pids);
    for (int r = 0; r < comm.size(); ++r) {
      CHECK(pids.count(r + 1) == 1);  // Chrome's pid r + 1 is rank r ("rank r" in its process_name)
      CHECK(names.count("work on rank " + std::to_string(r)) == 1);
    }
  }
  comm.barrier();
  fs::remove_all(dir);
}

TEST_CASE("merge_over_ranks: each rank's events move onto rank 0's clock and carry their rank") {
  const korch::Communicator comm = korch::Communicator::world();
  // Origins 1 us apart per rank: an event at 0 on rank r's clock is at 1000 r ns on rank 0's.
  const std::vector<korch::TraceEvent> events{event("step", "task", "cpu", 0, 0, 500)};
  const auto all = korch::merge_over_ranks(events, 5000000 + 1000 * static_cast<std::int64_t>(comm.rank()), comm);
  REQUIRE(static_cast<int>(all.size()) == comm.size());
  for (int r = 0; r < comm.size(); ++r) {
    const auto& e = all[static_cast<std::size_t>(r)];
    CHECK(e.process == r);
    CHECK(e.begin_ns == 1000 * r);
    CHECK(e.end_ns == 1000 * r + 500);
  }
  // The timeline of the merged events: one row per rank's thread, labelled with the rank.
  const korch::TimelineLayout layout = korch::timeline_layout(all, 400);
  CHECK(static_cast<int>(layout.rows.size()) == comm.size());
  CHECK(layout.ranks == (comm.size() > 1));
}

TEST_CASE("RecentCycles keeps the newest cycles' events in order and empties the trace it takes from") {
  korch::RecentCycles recent(2);
  korch::Trace trace;
  for (int cycle = 1; cycle <= 5; ++cycle) {
    for (int task = 0; task < cycle; ++task)
      trace.record(event("cycle" + std::to_string(cycle), "task", "cpu", 0, 1000 * task, 1000 * task + 500));
    recent.take(trace);
    CHECK(trace.size() == 0);
  }
  CHECK(recent.seen() == 5);
  CHECK(recent.kept() == 2);
  const auto events = recent.events();
  REQUIRE(events.size() == 4 + 5);
  for (std::size_t i = 0; i < 4; ++i) CHECK(events[i].name == "cycle4");
  for (std::size_t i = 4; i < events.size(); ++i) CHECK(events[i].name == "cycle5");
  CHECK(events[3].begin_ns == 3000);
  CHECK(recent.newest().size() == 5);

  recent.keep({});  // a cycle that recorded nothing still counts, and pushes the oldest out
  CHECK(recent.seen() == 6);
  CHECK(recent.events().size() == 5);
  CHECK(recent.newest().empty());
  recent.clear();
  CHECK(recent.kept() == 0);
  CHECK(recent.seen() == 0);
  CHECK(recent.events().empty());
}

TEST_CASE("RecentCycles: keeping no cycle is a korch::Error saying how many to keep") {
  for (int capacity : {0, -3}) {
    try {
      korch::RecentCycles recent(capacity);
      FAIL("no error for capacity " << capacity);
    } catch (const korch::Error& e) {
      const std::string what = e.what();
      CHECK(what.find("RecentCycles") != std::string::npos);
      CHECK(what.find("at least 1") != std::string::npos);
    }
  }
}

TEST_CASE("bytes counters: Chrome counter tracks, carried to rank 0 with transfers' bytes, left out of timelines") {
  std::vector<korch::TraceEvent> events;
  events.push_back(event("advect", "task", "cpu", 0, 0, 600000));
  events.push_back(event("host_to_device", "transfer", "mover", 0, 600000, 800000));
  events.back().bytes = 4096;
  events.push_back(korch::bytes_counter("state", 0, 800000));
  events.push_back(korch::bytes_counter("halo", 1536, 800000));
  CHECK(korch::is_bytes_counter(events.back()));
  CHECK_FALSE(korch::is_bytes_counter(events.front()));

  const auto json = nlohmann::json::parse(korch::chrome_json(events));
  std::map<std::string, std::uint64_t> counters;
  std::uint64_t transfer_bytes = 0;
  for (const auto& e : json.at("traceEvents")) {
    if (e.at("ph") == "C") counters[e.at("name").get<std::string>()] = e.at("args").at("bytes").get<std::uint64_t>();
    if (e.at("ph") == "X" && e.at("name") == "host_to_device") transfer_bytes = e.at("args").at("bytes");
    if (e.at("ph") == "X" && e.at("name") == "advect") CHECK_FALSE(e.at("args").contains("bytes"));
  }
  CHECK(counters == std::map<std::string, std::uint64_t>{{"bytes moved: halo", 1536}, {"bytes moved: state", 0}});
  CHECK(transfer_bytes == 4096);

  // What ranks send to rank 0 keeps the bytes; rows written without them read as 0.
  const auto back = korch::events_from_json(korch::events_to_json(events));
  REQUIRE(back.size() == events.size());
  CHECK(back[1].bytes == 4096);
  CHECK(back[3].bytes == 1536);
  CHECK(korch::is_bytes_counter(back[3]));
  CHECK(korch::events_from_json(R"([["a","task","cpu",0,"b",0,5,0]])").front().bytes == 0);

  // Counters have no duration and no row: the timeline is that of the spans alone.
  const std::vector<korch::TraceEvent> spans(events.begin(), events.begin() + 2);
  const auto with = korch::timeline_layout(events, 500), without = korch::timeline_layout(spans, 500);
  CHECK(with.rows.size() == without.rows.size());
  CHECK(with.names == without.names);
  CHECK(with.height == without.height);
  CHECK(korch::timeline_events(events, {}).size() == 2);
  CHECK(korch::transfer_overlap(events).transfers == 1);
}

TEST_CASE("RecentCycles::add_to_newest adds to the newest cycle; with none kept it is a korch::Error") {
  korch::RecentCycles recent(2);
  CHECK_THROWS_WITH_AS(recent.add_to_newest(korch::bytes_counter("state", 1, 0)), doctest::Contains("keep a cycle"),
                       korch::Error);
  recent.keep({event("a", "task", "cpu", 0, 0, 10)});
  recent.keep({event("b", "task", "cpu", 0, 20, 30)});
  recent.add_to_newest(korch::bytes_counter("state", 7, 30));
  REQUIRE(recent.newest().size() == 2);
  CHECK(recent.newest().back().bytes == 7);
  CHECK(recent.events().size() == 3);
}
