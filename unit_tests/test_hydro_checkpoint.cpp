// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hydro checkpoints as a user may hand them to --restart: a real one continues bitwise; a flipped
// bit, hand-edited fields, another version, a FIFO or device, a cut or lengthened file, a failed
// state and a run already past --steps or --tmax are each refused naming the file and the field or
// option (checkpoint.hpp).
#include "test_hydro_checkpoint_support.hpp"
#include "test_watchdog.hpp"

#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

using namespace korch;
using namespace korch::hydro;
using namespace korch::hydro::checkpoint_test;

namespace {

struct Edit {
  std::string what;
  std::string from;  // replaced once
  std::string to;
  std::string refused_field;  // what the re-signed file's message names; empty: the re-signed edit is in range
};

std::string replaced(std::string bytes, const std::string& from, const std::string& to) {
  const std::size_t at = bytes.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return bytes.replace(at, from.size(), to);
}

// The header line of `field`, newline included.
std::string line_of(const std::string& bytes, const std::string& field) {
  const std::size_t at = bytes.find("\n" + field + " ") + 1;
  return bytes.substr(at, bytes.find('\n', at) + 1 - at);
}

}  // namespace

TEST_CASE("hydro checkpoint: a real one reads back bitwise and continues to the uninterrupted run's state") {
  const fs::path dir = scratch("continue");
  const std::string path = (dir / "checkpoint.bin").string();
  Options o = small_run();
  std::vector<std::vector<double>> uninterrupted;
  double uninterrupted_time = 0;
  {
    Simulation sim(o);
    for (int s = 0; s < 6; ++s) sim.step();
    for (int v = 0; v < n_cons; ++v) uninterrupted.push_back(sim.gather(v));
    uninterrupted_time = sim.time();
  }
  write_real_checkpoint(o, 3, path);
  const CheckpointContent c = read_checkpoint_file(path, o);
  CHECK(c.steps == 3);
  CHECK(c.time > 0);
  CHECK(c.cells_per_block == 4);
  CHECK(same_bits(c.cfl, o.cfl));
  check_checkpoint_file(path, o);
  o.restart = path;
  Simulation sim(o);
  CHECK(sim.steps_done() == 3);
  for (int s = 0; s < 3; ++s) sim.step();
  CHECK(same_bits(sim.time(), uninterrupted_time));
  for (int v = 0; v < n_cons; ++v) {
    const std::vector<double> state = sim.gather(v);
    CHECK(std::memcmp(state.data(), uninterrupted[static_cast<std::size_t>(v)].data(), state.size() * sizeof(double)) ==
          0);
  }
  fs::remove_all(dir);
}

TEST_CASE("hydro checkpoint: a flipped mantissa bit in the state is refused by the checksum") {
  const fs::path dir = scratch("flip");
  const std::string path = (dir / "checkpoint.bin").string();
  const Options o = small_run();
  write_real_checkpoint(o, 3, path);
  std::string bytes = read_bytes(path);
  const std::size_t state = bytes.find("\nend\n") + 5;
  bytes[state + 8 * 5] = static_cast<char>(bytes[state + 8 * 5] ^ 1);  // the last mantissa bit of cell 5's density
  write_bytes(path, bytes);
  const std::string message = refusal(path, o);
  CHECK(message.find("checkpoint '" + path + "'") != std::string::npos);
  CHECK(message.find("field 'checksum'") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("hydro checkpoint: hand-edited header fields are refused naming the field, re-signed or not") {
  const fs::path dir = scratch("edits");
  const std::string path = (dir / "checkpoint.bin").string();
  const Options o = small_run();
  write_real_checkpoint(o, 3, path);
  const std::string bytes = read_bytes(path);
  const std::string steps = line_of(bytes, "steps"), time = line_of(bytes, "time"),
                    totals = line_of(bytes, "initial_totals");
  const std::string checksum = line_of(bytes, "checksum");
  const std::string negative_time = "time -" + time.substr(5);
  const std::vector<Edit> edits = {
      {"steps lowered", "steps 3\n", "steps 2\n", ""},
      {"steps negative", "steps 3\n", "steps -1\n", "'steps'"},
      {"steps not an integer", "steps 3\n", "steps 3.5\n", "'steps'"},
      {"steps 0 after time passed", "steps 3\n", "steps 0\n", "'time'"},
      {"a duplicated line", steps, (steps + steps), "'steps' is given twice"},
      {"time negative", time, negative_time, "'time'"},
      {"time not finite", time, "time nan\n", "'time'"},
      {"initial_totals changed", totals, "initial_totals 0x1p+1 0x0p+0 0x0p+0 0x0p+0 0x1p+0\n", ""},
      {"initial_totals short", totals, "initial_totals 1 0 0 0\n", "'initial_totals'"},
      {"initial_totals not finite", totals, "initial_totals 1 0 inf 0 1\n", "'initial_totals'"},
      {"cells changed", "cells 16\n", "cells 17\n", "'cells'"},
      {"blocks 0", "blocks 1\n", "blocks 0\n", "'blocks'"},
      {"dim 4", "dim 2\n", "dim 4\n", "'dim'"},
      {"gamma 1", "gamma 0x1.6666666666666p+0\n", "gamma 1\n", "'gamma'"},
      {"unknown limiter", "limiter mc\n", "limiter superbee\n", "'limiter'"},
      {"an unknown field", checksum, ("colour blue\n" + checksum), "unknown field 'colour'"},
      {"a missing field", "boundary outflow\n", "", "no field 'boundary'"},
      {"checksum not last", ("cells 16\n" + checksum), (checksum + "cells 16\n"),
       "'checksum' is not the header's last"},
      {"checksum in capitals", checksum, "checksum fnv1a64 ABCDEF0123456789\n", ""},
  };
  for (const Edit& e : edits) {
    INFO(e.what);
    const std::string edited = replaced(bytes, e.from, e.to);
    write_bytes(path, edited);
    const std::string as_edited = refusal(path, o);
    CHECK(as_edited.find("checkpoint '" + path + "'") != std::string::npos);
    write_bytes(path, resigned(edited));
    const std::string message = refusal(path, o);
    if (e.refused_field.empty()) {
      // Each field in range (or the checksum itself, which re-signing rewrites): the checksum sees it.
      CHECK(as_edited.find("field 'checksum'") != std::string::npos);
      continue;
    }
    INFO(message);
    CHECK(message.find(e.refused_field) != std::string::npos);
    CHECK(message.find("checkpoint '" + path + "'") != std::string::npos);
  }
  fs::remove_all(dir);
}

TEST_CASE("hydro checkpoint: another version is refused naming both versions") {
  const fs::path dir = scratch("version");
  const std::string path = (dir / "checkpoint.bin").string();
  const Options o = small_run();
  write_real_checkpoint(o, 3, path);
  const std::string bytes = read_bytes(path);
  write_bytes(path, replaced(bytes, "korch-hydro checkpoint 3\n", "korch-hydro checkpoint 2\n"));
  CHECK(refusal(path, o).find("written by an older korch, version 2; this korch reads version 3") != std::string::npos);
  write_bytes(path, replaced(bytes, "korch-hydro checkpoint 3\n", "korch-hydro checkpoint 4\n"));
  CHECK(refusal(path, o).find("written by a newer korch, version 4; this korch reads version 3") != std::string::npos);
  for (const std::string first : {"korch-hydro checkpoint two\n", "P6\n"}) {
    write_bytes(path, replaced(bytes, "korch-hydro checkpoint 3\n", first));
    CHECK(refusal(path, o).find("not a korch-hydro checkpoint") != std::string::npos);
  }
  write_bytes(path, "");
  CHECK(refusal(path, o).find("empty") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("hydro checkpoint: a FIFO, /dev/zero and a folder are refused at once, never read") {
  const fs::path dir = scratch("special");
  const std::string fifo = (dir / "checkpoint.fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const Options o = small_run();
  const korch::test::Watchdog::Scope watch("reading a FIFO, /dev/zero and a folder as checkpoints",
                                           std::chrono::seconds(20));
  const struct {
    std::string path;
    const char* kind;
  } cases[] = {{fifo, "is a FIFO"}, {"/dev/zero", "is a character device"}, {dir.string(), "is a folder"}};
  for (const auto& c : cases) {
    if (c.path == "/dev/zero" && !fs::exists(c.path)) continue;
    const auto start = std::chrono::steady_clock::now();
    const std::string message = refusal(c.path, o);
    INFO(message);
    CHECK(message.find(c.kind) != std::string::npos);
    CHECK(message.find("option --restart: '" + c.path + "'") != std::string::npos);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  }
  fs::remove_all(dir);
}

TEST_CASE(
    "hydro checkpoint: a run at or past --steps or --tmax is refused naming the option and the checkpoint's step") {
  const fs::path dir = scratch("finished");
  const std::string path = (dir / "checkpoint.bin").string();
  Options o = small_run();
  write_real_checkpoint(o, 3, path);
  const CheckpointContent c = read_checkpoint_file(path, o);
  for (int steps : {2, 3}) {
    o.steps = steps;
    const std::string message = refusal(path, o);
    CHECK(message.find("option --steps: " + std::to_string(steps)) == 0);
    CHECK(message.find("at step 3") != std::string::npos);
  }
  o.steps = 0;
  o.tmax = c.time;
  CHECK(refusal(path, o).find("option --tmax") == 0);
  o.tmax = 0;  // the problem's default, 0.05 for sedov, which this coarse grid passes in 3 steps
  REQUIRE(c.time > default_tmax(o.problem));
  CHECK(refusal(path, o).find("option --tmax: 0.05 (the default of --problem sedov)") == 0);
  o.tmax = c.time * 2;
  CHECK(refusal(path, o).empty());
  fs::remove_all(dir);
}

TEST_CASE("hydro checkpoint: a cut, lengthened or failed state, or other options, are refused naming the cause") {
  const fs::path dir = scratch("state");
  const std::string path = (dir / "checkpoint.bin").string();
  const Options o = small_run();
  write_real_checkpoint(o, 3, path);
  const std::string bytes = read_bytes(path);
  write_bytes(path, bytes.substr(0, bytes.size() - 8));
  CHECK(refusal(path, o).find("cut short") != std::string::npos);
  write_bytes(path, bytes + "x");
  CHECK(refusal(path, o).find("longer than a checkpoint") != std::string::npos);
  std::string failed = bytes;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::memcpy(&failed[bytes.find("\nend\n") + 5 + 8 * (16 * 4 + 6)], &nan, sizeof nan);  // energy of cell (2, 1)
  write_bytes(path, resigned(failed));
  CHECK(refusal(path, o).find("the state's energy at cell (2, 1, 0) is nan") != std::string::npos);
  write_bytes(path, bytes);
  auto with = [&](auto change) {
    Options other = o;
    change(other);
    return refusal(path, other);
  };
  CHECK(with([](Options& x) { x.cfl = 0.3; }).find("option --cfl") == 0);
  CHECK(with([](Options& x) { x.conduction = 0.1; }).find("option --conduction") == 0);
  CHECK(with([](Options& x) { x.problem = Problem::wave; }).find("option --problem") == 0);
  CHECK(with([](Options& x) { x.blocks = 2; }).find("option --blocks") == 0);
  CHECK(with([](Options& x) { x.limiter = Limiter::minmod; }).find("option --limiter") == 0);
  fs::remove_all(dir);
}
