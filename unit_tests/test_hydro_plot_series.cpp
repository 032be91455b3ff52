// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The plot series record (plot_series.hpp), which a continued run reads back to list its earlier
// plots: written and read back unchanged; damaged (a flipped bit, a cut, a line too many, a
// malformed step), or not a file at all, it is refused naming the file and the way out.
#include "fnv1a64.hpp"
#include "options.hpp"
#include "plot_series.hpp"

#include <korch/error.hpp>

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using namespace korch::hydro;
namespace fs = std::filesystem;

namespace {

struct Folder {
  fs::path path = fs::temp_directory_path() / ("korch-test-plot-series-" + std::to_string(::getpid()));
  Folder() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Folder() { fs::remove_all(path); }
};

std::string text_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_text(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

// `text` with its checksum line, computed here as the format says (FNV-1a, 64 bits).
std::string with_checksum(const std::string& text) {
  Fnv1a64 sum;
  sum.add(text.data(), text.size());
  return text + fmt::format("checksum fnv1a64 {:016x}\n", sum.value());
}

std::string refusal(const fs::path& file) {
  try {
    read_series_record(file.string());
  } catch (const korch::Error& e) {
    return e.what();
  }
  return "";
}

SeriesRecord sedov_record() {
  Options o;
  o.blocks = 6;
  o.max_level = 2;
  return SeriesRecord{series_identity(o), {0, 10, 20, 25}};
}

}  // namespace

TEST_CASE("hydro plot series: a record reads back as written, and a missing one is no record") {
  const Folder dir;
  const fs::path file = dir.path / "plot.series";
  CHECK_FALSE(read_series_record(file.string()).has_value());
  const SeriesRecord written = sedov_record();
  write_series_record(file.string(), written);
  const auto read = read_series_record(file.string());
  REQUIRE(read.has_value());
  CHECK(read->identity == written.identity);
  CHECK(read->cycles == written.cycles);
  CHECK(series_difference(*read, written.identity).empty());
  const std::string text = text_of(file);
  CHECK(text.find("--max-level 2\n") != std::string::npos);
  CHECK(text.rfind("checksum fnv1a64 ") == text.size() - 34);
}

TEST_CASE("hydro plot series: a damaged record is refused, naming the file and the way out") {
  const Folder dir;
  const fs::path file = dir.path / "plot.series";
  write_series_record(file.string(), sedov_record());
  const std::string good = text_of(file);
  // Every single flipped bit of the record, its checksum line included.
  int accepted = 0;
  for (std::size_t byte = 0; byte < good.size(); ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      write_text(file, bad);
      const std::string why = refusal(file);
      accepted += why.empty();
      if (byte == good.size() / 2 && bit == 0) {
        CHECK(why.find(file.string()) != std::string::npos);
        CHECK(why.find("checksum") != std::string::npos);
        CHECK(why.find("--plot-prefix") != std::string::npos);
      }
    }
  CHECK(accepted == 0);
  // Cut short anywhere, or emptied.
  for (std::size_t n = 0; n < good.size(); ++n) {
    write_text(file, good.substr(0, n));
    CHECK_FALSE(refusal(file).empty());
  }
}

TEST_CASE("hydro plot series: lines that are not the run's options and its ascending steps are refused") {
  const Folder dir;
  const fs::path file = dir.path / "plot.series";
  // Bodies under a valid checksum: what a hand edit that also fixed the checksum could leave.
  write_text(file, with_checksum("korch-hydro plot series\n--problem sedov\n--cfl 0.4\nplots 0 5\n"));
  CHECK(refusal(file).empty());
  for (const std::string body : {"--problem sedov\n", "--problem sedov\nplots 0 5\nplots 7\n", "plots 0 5 5\n",
                                 "plots 0 x5\n", "plots 0 5x\n", "plots -1 3\n", "plots 0 99999999999\n",
                                 "--colour red\nplots 0\n", "plots 0\n--problem sedov\n", "--problem\nplots 0\n"}) {
    CAPTURE(body);
    write_text(file, with_checksum("korch-hydro plot series\n" + body));
    const std::string why = refusal(file);
    CHECK(why.find(file.string()) != std::string::npos);
    CHECK((why.find("line") != std::string::npos || why.find("no 'plots' line") != std::string::npos));
  }
  write_text(file, with_checksum("korch-hydro plot series, another\nplots 0\n"));
  CHECK(refusal(file).find("does not begin with") != std::string::npos);
}

TEST_CASE("hydro plot series: a folder, a FIFO or a huge file in the record's place is refused at once") {
  const Folder dir;
  const fs::path folder = dir.path / "plot.series";
  fs::create_directories(folder);
  CHECK(refusal(folder).find("is a folder") != std::string::npos);
  const fs::path fifo = dir.path / "fifo.series";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(refusal(fifo).find("not a regular file") != std::string::npos);
  const fs::path huge = dir.path / "huge.series";
  std::ofstream{huge}.close();
  fs::resize_file(huge, std::uintmax_t{1} << 25);
  CHECK(refusal(huge).find("more than the 16777216") != std::string::npos);
}
