// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the hydro checkpoint tests share: a small real checkpoint written by a Simulation, its bytes,
// edits re-signed with a fresh checksum (as a user who knows the algorithm would make them), and
// the message a refused checkpoint gives.
#pragma once

#include "checkpoint.hpp"
#include "fnv1a64.hpp"
#include "options.hpp"
#include "simulation.hpp"

#include <korch/error.hpp>

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace korch::hydro::checkpoint_test {

namespace fs = std::filesystem;

inline fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("korch-test-hydro-checkpoint-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A small grid, so that a checkpoint takes about a kilobyte; --steps 10 continues one of step 3.
inline Options small_run() {
  Options o;
  o.blocks = 1;
  o.cells_per_block = 4;
  o.threads = 1;
  o.steps = 10;
  o.quiet = true;
  o.write_output = false;
  return o;
}

// Runs `steps` steps of `o` and writes their checkpoint to `path`.
inline void write_real_checkpoint(const Options& o, int steps, const std::string& path) {
  Simulation sim(o);
  for (int s = 0; s < steps; ++s) sim.step();
  sim.write_checkpoint(path);
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error::format("cannot write {}", path);
}

// `bytes` with the checksum recomputed over what it covers: the bytes before the checksum line and
// those after the 'end' line.
inline std::string resigned(std::string bytes) {
  const std::size_t line = bytes.find("\nchecksum fnv1a64 ") + 1;
  const std::size_t end = bytes.find("\nend\n", line) + 5;
  REQUIRE(line > 0);
  REQUIRE(end > line + 4);
  Fnv1a64 sum;
  sum.add(bytes.data(), line);
  sum.add(bytes.data() + end, bytes.size() - end);
  bytes.replace(line + std::strlen("checksum fnv1a64 "), 16, fmt::format("{:016x}", sum.value()));
  return bytes;
}

// The message of the korch::Error that reading `path` for `o` throws; "" when it is read.
inline std::string refusal(const std::string& path, const Options& o) {
  try {
    read_checkpoint_file(path, o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

inline bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Every field and every bit of the state.
inline bool same_content(const CheckpointContent& a, const CheckpointContent& b) {
  bool same = a.problem == b.problem && a.dim == b.dim && a.blocks == b.blocks &&
              a.cells_per_block == b.cells_per_block && same_bits(a.gamma, b.gamma) && same_bits(a.cfl, b.cfl) &&
              same_bits(a.conduction, b.conduction) && same_bits(a.time, b.time) && a.limiter == b.limiter &&
              a.boundary == b.boundary && a.steps == b.steps && a.max_level == b.max_level &&
              same_bits(a.refine_above, b.refine_above) && same_bits(a.derefine_below, b.derefine_below) &&
              a.regrid_every == b.regrid_every && a.leaves == b.leaves;
  for (std::size_t v = 0; v < a.initial_totals.size(); ++v)
    same = same && same_bits(a.initial_totals[v], b.initial_totals[v]);
  for (std::size_t v = 0; v < a.state.size(); ++v)
    same = same && a.state[v].size() == b.state[v].size() &&
           std::memcmp(a.state[v].data(), b.state[v].data(), a.state[v].size() * sizeof(double)) == 0;
  return same;
}

}  // namespace korch::hydro::checkpoint_test
