// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Fuzz target: korch-hydro's checkpoint reader (apps/hydro/lib/outputs/checkpoint.hpp) on any bytes. The
// header is read on its own first; when it parses, the run's options are taken from it (--steps one
// beyond its step), so that the whole reader runs on the file, state and checksum included. Rules
// checked: the only exception is korch::Error, naming the file; check_checkpoint_file and
// read_checkpoint_file refuse the same files with the same message; an accepted checkpoint has the
// grid's cells in each variable and a finite state, and reads back unchanged after
// write_checkpoint_file.
#include "checkpoint.hpp"
#include "checkpoint_header.hpp"
#include "fuzz_support.hpp"
#include "options.hpp"

#include <korch/error.hpp>

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

using korch::fuzz::broken;

namespace korch::hydro {
// The plot file writer (HDF5) is not linked here; options.cpp asks whether it is there.
bool plot_files_supported() noexcept { return true; }
}  // namespace korch::hydro

namespace {

namespace kh = korch::hydro;

// A folder of this process for the input and the round trip, removed when the fuzzer exits.
const std::string& scratch_dir() {
  static const std::string* const dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("korch_fuzz_checkpoint_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_dir(), ignored);
    });
    return new std::string(d.string());
  }();
  return *dir;
}

// Options that continue the checkpoint whose header is `h`.
kh::Options options_of(const kh::CheckpointContent& h) {
  kh::Options o;
  o.problem = h.problem == "sod-x"   ? kh::Problem::sod_x
              : h.problem == "sod-y" ? kh::Problem::sod_y
              : h.problem == "sod-z" ? kh::Problem::sod_z
              : h.problem == "wave"  ? kh::Problem::wave
                                     : kh::Problem::sedov;
  o.dim = h.dim;
  o.blocks = h.blocks;
  o.cells_per_block = h.cells_per_block;
  o.gamma = h.gamma;
  o.cfl = h.cfl;
  o.conduction = h.conduction;
  o.limiter = h.limiter == "minmod" ? korch::hydro::Limiter::minmod : korch::hydro::Limiter::mc;
  o.boundary = h.boundary == "periodic" ? kh::Boundary::periodic : kh::Boundary::outflow;
  o.steps = h.steps < INT_MAX ? h.steps + 1 : INT_MAX;
  o.max_level = h.max_level;
  o.refine_above = h.refine_above;
  o.derefine_below = h.derefine_below;
  o.regrid_every = h.regrid_every;
  return o;
}

bool same(const kh::CheckpointContent& a, const kh::CheckpointContent& b) {
  auto bits = [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; };
  bool s = a.problem == b.problem && a.dim == b.dim && a.blocks == b.blocks && a.cells_per_block == b.cells_per_block &&
           bits(a.gamma, b.gamma) && bits(a.cfl, b.cfl) && bits(a.conduction, b.conduction) && bits(a.time, b.time) &&
           a.limiter == b.limiter && a.boundary == b.boundary && a.steps == b.steps && a.max_level == b.max_level &&
           bits(a.refine_above, b.refine_above) && bits(a.derefine_below, b.derefine_below) &&
           a.regrid_every == b.regrid_every && a.leaves == b.leaves;
  for (std::size_t v = 0; v < 5; ++v) {
    s = s && bits(a.initial_totals[v], b.initial_totals[v]) && a.state[v].size() == b.state[v].size() &&
        std::memcmp(a.state[v].data(), b.state[v].data(), a.state[v].size() * sizeof(double)) == 0;
  }
  return s;
}

void check_accepted(const kh::CheckpointContent& c, const kh::Options& o) {
  // A uniform grid's cells, or the cells of an adaptive mesh's leaves.
  const std::size_t n = static_cast<std::size_t>(o.cells_per_block) *
                        (c.max_level > 0 ? std::size_t{1} : static_cast<std::size_t>(o.blocks));
  const std::size_t cells = (o.dim == 3 ? n * n * n : n * n) * (c.max_level > 0 ? c.leaves.size() : 1);
  for (const auto& v : c.state) {
    if (v.size() != cells)
      broken("an accepted checkpoint has the grid's cells in each variable", std::to_string(v.size()));
    if (!std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); }))
      broken("an accepted checkpoint's state is finite", "");
  }
  const std::string again = scratch_dir() + "/again.bin";
  kh::write_checkpoint_file(again, c);
  if (!same(kh::read_checkpoint_file(again, o), c))
    broken("an accepted checkpoint reads back unchanged once written", "");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch_dir() + "/input.bin";
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(size));
  kh::Options o;
  o.blocks = 1;
  o.cells_per_block = 4;
  o.steps = 10;
  try {
    o = options_of(kh::parse_checkpoint_header(bytes.substr(0, kh::checkpoint_header_limit), path).fields);
  } catch (const korch::Error&) {
  }
  std::string read_message, check_message;
  try {
    check_accepted(kh::read_checkpoint_file(path, o), o);
  } catch (const korch::Error& e) {
    read_message = e.what();
    if (read_message.find("'" + path + "'") == std::string::npos) broken("a refusal names the file", read_message);
  } catch (const std::exception& e) {
    broken("the reader throws only korch::Error", e.what());
  }
  try {
    kh::check_checkpoint_file(path, o);
  } catch (const korch::Error& e) {
    check_message = e.what();
  } catch (const std::exception& e) {
    broken("the reader throws only korch::Error", e.what());
  }
  if (check_message != read_message)
    broken("check_checkpoint_file and read_checkpoint_file agree", read_message + "\n" + check_message);
  return 0;
}
