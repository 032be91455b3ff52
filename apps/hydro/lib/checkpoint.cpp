#include "checkpoint.hpp"

#include "simulation.hpp"

#include <korch/error.hpp>
#include <korch/output_files.hpp>

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace korch::hydro {

namespace {

constexpr const char* kMagic = "korch-hydro checkpoint 1";

std::atomic<int> caught_signal{0};

extern "C" void on_stop_signal(int signal) { caught_signal.store(signal); }

std::string exact(double x) { return fmt::format("{:a}", x); }  // hexadecimal: the bits survive the text

bool little_endian() {
  const std::uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

}  // namespace

void catch_stop_signals() {
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
}

int stop_signal() noexcept { return caught_signal.load(); }

void write_checkpoint_file(const std::string& path, const CheckpointContent& c) {
  if (!little_endian()) throw Error("checkpoint: this machine is not little-endian; checkpoints store little-endian doubles");
  write_file_atomically(path, [&](const std::string& temporary) {
    std::ofstream out(temporary, std::ios::binary);
    if (!out) throw Error::format("checkpoint: cannot open '{}' for writing", temporary);
    out << kMagic << "\n"
        << "problem " << c.problem << "\n"
        << "dim " << c.dim << "\n"
        << "blocks " << c.blocks << "\n"
        << "cells_per_block " << c.cells_per_block << "\n"
        << "gamma " << exact(c.gamma) << "\n"
        << "limiter " << c.limiter << "\n"
        << "boundary " << c.boundary << "\n"
        << "time " << exact(c.time) << "\n"
        << "steps " << c.steps << "\n"
        << "initial_totals " << exact(c.initial_totals[0]) << " " << exact(c.initial_totals[1]) << " "
        << exact(c.initial_totals[2]) << " " << exact(c.initial_totals[3]) << " " << exact(c.initial_totals[4]) << "\n"
        << "cells " << c.state[0].size() << "\n"
        << "end\n";
    for (const auto& v : c.state) out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
    if (!out) throw Error::format("checkpoint: writing '{}' failed: check the free space", temporary);
  });
}

CheckpointContent read_checkpoint_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error::format("option --restart: '{}' is a folder, not a checkpoint file", path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error::format("option --restart: cannot open '{}': give a checkpoint file written by --checkpoint-every", path);
  std::string line;
  if (!std::getline(in, line) || line != kMagic)
    throw Error::format("option --restart: '{}' is not a korch-hydro checkpoint (its first line is not '{}')", path, kMagic);
  std::map<std::string, std::string> fields;
  while (std::getline(in, line) && line != "end") {
    const auto space = line.find(' ');
    if (space == std::string::npos || line.size() > 200)
      throw Error::format("checkpoint '{}': header line '{}' is not 'name value'", path, line.substr(0, 60));
    fields[line.substr(0, space)] = line.substr(space + 1);
  }
  if (line != "end") throw Error::format("checkpoint '{}': the header has no 'end' line: the file is cut short", path);
  auto field = [&](const char* name) -> const std::string& {
    auto it = fields.find(name);
    if (it == fields.end()) throw Error::format("checkpoint '{}': the header has no field '{}'", path, name);
    return it->second;
  };
  auto integer = [&](const char* name, long long lo, long long hi) {
    const std::string& text = field(name);
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || v < lo || v > hi)
      throw Error::format("checkpoint '{}': field '{}' is '{}', not an integer in {}..{}", path, name, text.substr(0, 40), lo, hi);
    return v;
  };
  auto real = [&](const char* name) {
    const std::string& text = field(name);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || !std::isfinite(v))
      throw Error::format("checkpoint '{}': field '{}' is '{}', not a finite number", path, name, text.substr(0, 40));
    return v;
  };
  CheckpointContent c;
  c.problem = field("problem");
  c.dim = static_cast<int>(integer("dim", 2, 3));
  c.blocks = static_cast<int>(integer("blocks", 1, 1 << 20));
  c.cells_per_block = static_cast<int>(integer("cells_per_block", 1, 1 << 20));
  c.gamma = real("gamma");
  c.limiter = field("limiter");
  c.boundary = field("boundary");
  c.time = real("time");
  c.steps = static_cast<int>(integer("steps", 0, 1 << 30));
  {
    std::istringstream totals(field("initial_totals"));
    for (auto& t : c.initial_totals) {
      std::string word;
      totals >> word;
      char* end = nullptr;
      t = std::strtod(word.c_str(), &end);
      if (word.empty() || end != word.c_str() + word.size())
        throw Error::format("checkpoint '{}': field 'initial_totals' is not five numbers", path);
    }
  }
  const long long cells = integer("cells", 1, 1ll << 40);
  long long expected = 1;
  for (int d = 0; d < c.dim; ++d) expected *= static_cast<long long>(c.blocks) * c.cells_per_block;
  if (cells != expected)
    throw Error::format("checkpoint '{}': {} cells, but {}^{} blocks of {} cells make {}", path, cells, c.blocks, c.dim,
                        c.cells_per_block, expected);
  // The header's sizes against the file's before anything is allocated.
  const auto start = in.tellg();
  in.seekg(0, std::ios::end);
  const auto bytes = static_cast<long long>(in.tellg() - start);
  in.seekg(start);
  if (bytes != 5 * cells * static_cast<long long>(sizeof(double)))
    throw Error::format("checkpoint '{}': {} bytes of state after the header, {} expected for {} cells: the file is cut "
                        "short or not a checkpoint",
                        path, bytes, 5 * cells * static_cast<long long>(sizeof(double)), cells);
  for (auto& v : c.state) {
    v.resize(static_cast<std::size_t>(cells));
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
    if (!in) throw Error::format("checkpoint '{}': reading the state failed", path);
  }
  return c;
}

void check_restart_options(const CheckpointContent& c, const Options& o, const std::string& path) {
  auto mismatch = [&](const char* option, const std::string& file, const std::string& given) {
    if (file != given)
      throw Error::format("option {}: '{}' was written with {} {}, this run has {}: give the checkpoint's value", option,
                          path, option, file, given);
  };
  mismatch("--problem", c.problem, to_string(o.problem));
  mismatch("--dim", std::to_string(c.dim), std::to_string(o.dim));
  mismatch("--blocks", std::to_string(c.blocks), std::to_string(o.blocks));
  mismatch("--cells-per-block", std::to_string(c.cells_per_block), std::to_string(o.cells_per_block));
  mismatch("--limiter", c.limiter, o.limiter == Limiter::minmod ? "minmod" : "mc");
  const Boundary b = o.boundary ? *o.boundary : (o.problem == Problem::wave ? Boundary::periodic : Boundary::outflow);
  mismatch("--boundary", c.boundary, b == Boundary::periodic ? "periodic" : "outflow");
  if (c.gamma != o.gamma) mismatch("gamma", exact(c.gamma), exact(o.gamma));
}

}  // namespace korch::hydro
