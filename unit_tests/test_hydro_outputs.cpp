// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Output files and progress of the hydro app: writes by temporary name and rename, the output
// directory check before the first step, progress lines off a terminal, and clean errors for grids
// beyond the size limits.
#include <doctest/doctest.h>

#include <korch/error.hpp>
#include <korch/output_files.hpp>

#include "progress.hpp"
#include "simulation.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

// Named after the file: unity builds compile several suite files as one translation unit.
namespace test_hydro_outputs {

using namespace korch;
using namespace korch::hydro;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("korch-test-hydro-outputs-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw korch::Error::format("cannot write {}", path);
}

std::size_t count_files(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file();
  return n;
}

// The pid of a process that has exited (so no process has it, barring reuse).
long dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return static_cast<long>(child);
}

std::string progress_output(Progress::Mode mode, int steps) {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  Progress progress(f, mode, 1000.0);
  for (int s = 1; s <= steps; ++s) progress.update(static_cast<double>(s) / steps, s, 0.01 * s, 0.01, 0.5 * s);
  std::rewind(f);
  std::string text;
  for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) text.push_back(static_cast<char>(c));
  std::fclose(f);
  return text;
}

}  // namespace

TEST_CASE("output files: the final name only ever holds a complete file") {
  const fs::path dir = scratch("atomic");
  const std::string path = (dir / "data.txt").string();
  write_file_atomically(path, [](const std::string& tmp) { write_text(tmp, "first"); });
  CHECK(read_all(path) == "first");
  CHECK(count_files(dir) == 1);
  // The writer sees a temporary name in the same directory, hidden and recognisable.
  std::string seen;
  write_file_atomically(path, [&](const std::string& tmp) {
    seen = tmp;
    CHECK(read_all(path) == "first");  // the old file stays in place while the new one is written
    write_text(tmp, "second");
  });
  CHECK(read_all(path) == "second");
  CHECK(fs::path(seen).parent_path() == dir);
  CHECK(seen == temporary_path(path));
  CHECK(is_temporary_name(fs::path(seen).filename().string()));
  CHECK_FALSE(is_temporary_name("data.txt"));
  CHECK_FALSE(is_temporary_name(".data.txt.korch-tmp-"));
  CHECK_FALSE(is_temporary_name(".data.txt.korch-tmp-12x"));
  // A failing writer leaves the old file and no temporary; its error names the problem.
  CHECK_THROWS_WITH_AS(write_file_atomically(path,
                                             [](const std::string& tmp) {
                                               write_text(tmp, "half");
                                               throw korch::Error("disk on fire");
                                             }),
                       doctest::Contains("disk on fire"), korch::Error);
  CHECK(read_all(path) == "second");
  CHECK(count_files(dir) == 1);
  // Other exceptions become a korch::Error naming the file.
  CHECK_THROWS_WITH_AS(write_file_atomically(path, [](const std::string&) { throw std::runtime_error("boom"); }),
                       doctest::Contains(path.c_str()), korch::Error);
  fs::remove_all(dir);
}

TEST_CASE("output files: a text file is written whole, or not at all with an error naming it") {
  const fs::path dir = scratch("text");
  const std::string path = (dir / "notes.txt").string();
  const std::string text = std::string("line one\n") + std::string(100000, 'x') + "\nend\n";
  korch::write_text_file_atomically(path, text);
  CHECK(read_all(path) == text);
  CHECK(count_files(dir) == 1);
  const std::string nowhere = (dir / "no-such-folder" / "notes.txt").string();
  CHECK_THROWS_WITH_AS(korch::write_text_file_atomically(nowhere, text), doctest::Contains(nowhere.c_str()),
                       korch::Error);
  CHECK_FALSE(fs::exists(nowhere));
  CHECK(count_files(dir) == 1);
  fs::remove_all(dir);
}

TEST_CASE("output files: the directory is created and checked; stale temporaries of dead runs go") {
  const fs::path dir = scratch("prepare");
  const fs::path nested = dir / "a" / "b";
  prepare_output_directory(nested.string());
  CHECK(fs::is_directory(nested));
  CHECK(count_files(nested) == 0);  // the probe file is gone
  // A regular file in the way: the error names the directory and the reason.
  write_text((dir / "file").string(), "x");
  const std::string blocked = (dir / "file" / "out").string();
  CHECK_THROWS_WITH_AS(prepare_output_directory(blocked), doctest::Contains(blocked.c_str()), korch::Error);
  CHECK_THROWS_WITH_AS(prepare_output_directory((dir / "file").string()), doctest::Contains("not a directory"),
                       korch::Error);
  CHECK_THROWS_AS(prepare_output_directory(""), korch::Error);
  // Temporaries: a dead process's goes, this process's and other files stay.
  const std::string stale = (nested / (".density.png.korch-tmp-" + std::to_string(dead_pid()))).string();
  const std::string mine = temporary_path((nested / "trace.json").string());
  write_text(stale, "partial");
  write_text(mine, "partial");
  write_text((nested / "density.png").string(), "complete");
  prepare_output_directory(nested.string());
  CHECK_FALSE(fs::exists(stale));
  CHECK(fs::exists(mine));
  CHECK(fs::exists(nested / "density.png"));
  fs::remove_all(dir);
}

TEST_CASE("progress: one line per tenth off a terminal, a live bar on one, nothing when quiet") {
  const std::string lines = progress_output(Progress::Mode::lines, 25);
  CHECK(std::count(lines.begin(), lines.end(), '\n') == 10);
  CHECK(lines.find('\r') == std::string::npos);
  CHECK(lines.find("progress  40%  step 10  t = 1.0000e-01  dt = 1.000e-02") != std::string::npos);
  CHECK(lines.find("100%  step 25") != std::string::npos);
  CHECK(lines.find("cell updates/s") != std::string::npos);
  // Fewer steps than tenths: one line per step, the last at 100 %.
  const std::string few = progress_output(Progress::Mode::lines, 3);
  CHECK(std::count(few.begin(), few.end(), '\n') == 3);
  CHECK(few.find("100%") != std::string::npos);
  const std::string live = progress_output(Progress::Mode::live, 5);
  CHECK(live.find('\r') != std::string::npos);
  CHECK(std::count(live.begin(), live.end(), '\n') == 1);
  CHECK(progress_output(Progress::Mode::silent, 5).empty());
  CHECK(Progress::mode_for(true, stdout) == Progress::Mode::silent);
}

TEST_CASE("hydro: an output directory that cannot be written fails the run before its first step") {
  const fs::path dir = scratch("run");
  write_text((dir / "file").string(), "x");
  Options o;
  o.blocks = 2;
  o.cells_per_block = 8;
  o.steps = 2;
  o.quiet = true;
  o.out = (dir / "file" / "out").string();
  {
    Simulation sim(o);
    CHECK_THROWS_WITH_AS(sim.run(), doctest::Contains(o.out.c_str()), korch::Error);
    CHECK(sim.steps_done() == 0);
  }  // one korch::Runtime at a time
  // A writable one gets every output, and no temporaries stay.
  o.out = (dir / "out").string();
  Simulation ok(o);
  ok.run();
  ok.write_outputs();
  CHECK(ok.steps_done() == 2);
  for (const char* name : {"density.png", "timeline.png", "trace.json"}) CHECK(fs::file_size(dir / "out" / name) > 0);
  CHECK(count_files(dir / "out") == 3);
  fs::remove_all(dir);
}

TEST_CASE("hydro: a grid beyond the size limits is a clean error, not an int overflow") {
  Options o;
  o.blocks = 46341;
  o.cells_per_block = 2;
  o.quiet = true;
  o.write_output = false;
  CHECK_THROWS_WITH_AS(Simulation{o}, doctest::Contains("46341 x 46341 x 1 blocks exceed the limit of 2147483647"),
                       korch::Error);
  o.blocks = 100000;
  o.cells_per_block = 100000;
  CHECK_THROWS_WITH_AS(Simulation{o}, doctest::Contains("limit"), korch::Error);
}

}  // namespace test_hydro_outputs
