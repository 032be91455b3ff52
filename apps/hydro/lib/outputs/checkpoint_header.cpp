// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "checkpoint_header.hpp"

#include "euler_constants.hpp"

#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <vector>

namespace korch::hydro {

std::string exact_text(double x) { return fmt::format("{:a}", x); }  // hexadecimal: the bits survive the text

namespace {

constexpr const char* kVersionLine = "korch-hydro checkpoint ";
constexpr const char* kChecksumAlgorithm = "fnv1a64";
constexpr std::size_t kLineLimit = 200;  // the longest line korch writes (initial_totals) takes about 120

// A version 2 header's fields, in the order korch writes them.
constexpr std::array<const char*, 19> kFields = {"problem",      "dim",
                                                 "blocks",       "cells_per_block",
                                                 "gamma",        "cfl",
                                                 "conduction",   "limiter",
                                                 "boundary",     "time",
                                                 "steps",        "max_level",
                                                 "refine_above", "derefine_below",
                                                 "regrid_every", "initial_totals",
                                                 "leaves",       "cells",
                                                 "checksum"};

// At most 40 characters of a text for a message, bytes that are not printable ASCII shown as '?'.
std::string excerpt(const std::string& text) {
  std::string s = text.substr(0, 40);
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) ch = '?';
  return text.size() > 40 ? s + "..." : s;
}

// The whole text as a finite double: no leading space, nothing left over, no inf or nan.
bool parse_real(const std::string& text, double& value) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(value);
}

void check_version(const std::string& bytes, const std::string& path) {
  if (bytes.empty())
    throw Error::format("checkpoint '{}': the file is empty: give a checkpoint written by --checkpoint-every", path);
  const std::string first = bytes.substr(0, std::min(bytes.find('\n'), kLineLimit + 1));
  const std::string expected = kVersionLine + std::to_string(checkpoint_version);
  if (first == expected) return;
  if (first.rfind(kVersionLine, 0) == 0) {
    const std::string text = first.substr(std::char_traits<char>::length(kVersionLine));
    int version = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
    if (ec == std::errc() && end == text.data() + text.size() && version >= 1) {
      throw Error::format(
          "checkpoint '{}' was written by {} korch, version {}; this korch reads version {}: continue the "
          "run with the korch that wrote it, or start it again",
          path, version < checkpoint_version ? "an older" : "a newer", version, checkpoint_version);
    }
  }
  throw Error::format("checkpoint '{}': not a korch-hydro checkpoint: its first line is '{}', not '{}'", path,
                      excerpt(first), expected);
}

// The header's lines after the version line, each with its offset, up to its 'end' line.
struct HeaderLines {
  std::vector<std::string> text;
  std::vector<std::size_t> start;
  std::size_t length = 0;  // up to and including the 'end' line
};

HeaderLines split_lines(const std::string& bytes, const std::string& path) {
  HeaderLines lines;
  std::size_t start = bytes.find('\n') + 1;  // check_version saw the first line end
  for (;;) {
    const std::size_t end = bytes.find('\n', start);
    if (end == std::string::npos) {
      if (bytes.size() < checkpoint_header_limit)
        throw Error::format("checkpoint '{}': the header has no 'end' line: the file is cut short after {} bytes", path,
                            bytes.size());
      throw Error::format("checkpoint '{}': no 'end' line in the first {} bytes: the header is damaged", path,
                          checkpoint_header_limit);
    }
    std::string line = bytes.substr(start, end - start);
    if (line == "end") {
      lines.length = end + 1;
      return lines;
    }
    if (line.size() > kLineLimit)
      throw Error::format(
          "checkpoint '{}': header line {} has {} characters, more than a header line's {}: the header is "
          "damaged",
          path, lines.text.size() + 2, line.size(), kLineLimit);
    lines.text.push_back(std::move(line));
    lines.start.push_back(start);
    start = end + 1;
  }
}

// The header's fields by name, each given once; refusals name the file and the field.
class Fields {
 public:
  Fields(const HeaderLines& lines, const std::string& path) : lines_(lines), path_(path) {
    for (std::size_t i = 0; i < lines.text.size(); ++i) {
      const std::string& line = lines.text[i];
      const std::size_t space = line.find(' ');
      if (space == std::string::npos || space == 0)
        throw Error::format("checkpoint '{}': header line {} ('{}') is not 'name value'", path, i + 2, excerpt(line));
      const std::string name = line.substr(0, space);
      if (std::find_if(kFields.begin(), kFields.end(), [&](const char* f) { return name == f; }) == kFields.end())
        throw Error::format(
            "checkpoint '{}': header line {} has the unknown field '{}': a version {} checkpoint has {}", path, i + 2,
            excerpt(name), checkpoint_version, fmt::join(kFields, ", "));
      if (const auto seen = at_.find(name); seen != at_.end())
        throw Error::format("checkpoint '{}': field '{}' is given twice, on header lines {} and {}", path, name,
                            seen->second + 2, i + 2);
      at_[name] = i;
      values_.push_back(line.substr(space + 1));
    }
    for (const char* name : kFields)
      if (at_.count(name) == 0) throw Error::format("checkpoint '{}': the header has no field '{}'", path, name);
    if (at_.at("checksum") + 1 != lines.text.size())
      throw Error::format(
          "checkpoint '{}': field 'checksum' is not the header's last before 'end': the fields after it "
          "would not be covered by it",
          path);
  }

  const std::string& text(const char* name) const { return values_[at_.at(name)]; }
  std::size_t line_start(const char* name) const { return lines_.start[at_.at(name)]; }

  [[noreturn]] void refuse(const char* name, const std::string& why) const {
    throw Error::format("checkpoint '{}': field '{}' is '{}': {}", path_, name, excerpt(text(name)), why);
  }
  long long integer(const char* name, long long lo, long long hi) const {
    const std::string& s = text(name);
    long long v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < lo || v > hi)
      refuse(name, fmt::format("not an integer in {}..{}", lo, hi));
    return v;
  }
  double real(const char* name) const {
    double v = 0;
    if (!parse_real(text(name), v)) refuse(name, "not a finite number");
    return v;
  }
  const std::string& word(const char* name, std::initializer_list<const char*> allowed) const {
    const std::string& s = text(name);
    if (std::find_if(allowed.begin(), allowed.end(), [&](const char* w) { return s == w; }) == allowed.end())
      refuse(name, fmt::format("not one of {}", fmt::join(allowed, ", ")));
    return s;
  }

 private:
  const HeaderLines& lines_;
  const std::string& path_;
  std::map<std::string, std::size_t> at_;  // field name -> index in lines_.text and values_
  std::vector<std::string> values_;
};

std::array<double, 5> initial_totals(const Fields& f) {
  const std::string& s = f.text("initial_totals");
  std::array<double, 5> totals{};
  std::size_t start = 0;
  for (std::size_t v = 0; v < totals.size(); ++v) {
    const std::size_t end = v + 1 < totals.size() ? s.find(' ', start) : s.size();
    if (end == std::string::npos || !parse_real(s.substr(start, end - start), totals[v]))
      f.refuse("initial_totals", "not five finite numbers (mass, momentum x y z, energy) separated by single spaces");
    start = end + 1;
  }
  if (!(totals[0] > 0) || !(totals[4] > 0)) f.refuse("initial_totals", "a gas's total mass and energy are positive");
  return totals;
}

std::uint64_t checksum(const Fields& f) {
  const std::string& s = f.text("checksum");
  const std::string prefix = std::string(kChecksumAlgorithm) + " ";
  const std::string digits = s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : std::string();
  std::uint64_t value = 0;
  const bool lower_hex = digits.size() == 16 && std::all_of(digits.begin(), digits.end(), [](char ch) {
                           return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
                         });
  if (!lower_hex)
    f.refuse("checksum", fmt::format("not '{} ' and 16 lowercase hexadecimal digits", kChecksumAlgorithm));
  std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
  return value;
}

// What no single field shows: sizes that add up, a time that fits the step count.
void check_consistency(const CheckpointHeader& h, const Fields& f) {
  const CheckpointContent& c = h.fields;
  const long double per_block =
      c.dim == 3 ? static_cast<long double>(c.cells_per_block) * c.cells_per_block * c.cells_per_block
                 : static_cast<long double>(c.cells_per_block) * c.cells_per_block;
  const long double roots = c.dim == 3 ? static_cast<long double>(c.blocks) * c.blocks * c.blocks
                                       : static_cast<long double>(c.blocks) * c.blocks;
  const long double cells = per_block * static_cast<long double>(h.leaves);
  if (c.max_level == 0 && static_cast<long double>(h.leaves) != roots)
    f.refuse("leaves",
             fmt::format("a uniform grid of {}^{} blocks has {:.0f}", c.blocks, c.dim, static_cast<double>(roots)));
  if (c.max_level > 0 && static_cast<long double>(h.leaves) < roots)
    f.refuse("leaves", fmt::format("an adaptive mesh over {}^{} root blocks has at least {:.0f}", c.blocks, c.dim,
                                   static_cast<double>(roots)));
  const std::string shape = fmt::format("{} blocks of {}^{} cells", h.leaves, c.cells_per_block, c.dim);
  if (cells > INT_MAX)
    f.refuse("leaves", fmt::format("{} make {:.4g} cells, more than a grid holds ({})", shape,
                                   static_cast<double>(cells), INT_MAX));
  if (static_cast<long double>(h.cells) != cells)
    f.refuse("cells", fmt::format("{} make {:.0f}", shape, static_cast<double>(cells)));
  if (c.steps == 0 && c.time != 0) f.refuse("time", "a checkpoint at step 0 is at time 0");
  if (c.steps > 0 && c.time == 0) f.refuse("time", fmt::format("{} steps have advanced the time beyond 0", c.steps));
  if (c.problem == "sod-z" && c.dim != 3) f.refuse("problem", "sod-z runs along z, but field 'dim' is 2");
}

}  // namespace

std::size_t roots_of(const CheckpointContent& c) {
  const auto b = static_cast<std::size_t>(c.blocks);
  return c.dim == 3 ? b * b * b : b * b;
}

std::string checkpoint_header_fields(const CheckpointContent& c) {
  const auto& t = c.initial_totals;
  return fmt::format("{}{}\n", kVersionLine, checkpoint_version) +
         fmt::format("problem {}\ndim {}\nblocks {}\ncells_per_block {}\n", c.problem, c.dim, c.blocks,
                     c.cells_per_block) +
         fmt::format("gamma {}\ncfl {}\nconduction {}\n", exact_text(c.gamma), exact_text(c.cfl),
                     exact_text(c.conduction)) +
         fmt::format("limiter {}\nboundary {}\ntime {}\nsteps {}\n", c.limiter, c.boundary, exact_text(c.time),
                     c.steps) +
         fmt::format("max_level {}\nrefine_above {}\nderefine_below {}\nregrid_every {}\n", c.max_level,
                     exact_text(c.refine_above), exact_text(c.derefine_below), c.regrid_every) +
         fmt::format("initial_totals {} {} {} {} {}\n", exact_text(t[0]), exact_text(t[1]), exact_text(t[2]),
                     exact_text(t[3]), exact_text(t[4])) +
         fmt::format("leaves {}\ncells {}\n", c.max_level > 0 ? c.leaves.size() : roots_of(c), c.state[0].size());
}

std::string checkpoint_header_end(std::uint64_t checksum) {
  return fmt::format("checksum {} {:016x}\nend\n", kChecksumAlgorithm, checksum);
}

CheckpointHeader parse_checkpoint_header(const std::string& bytes, const std::string& path) {
  check_version(bytes, path);
  const HeaderLines lines = split_lines(bytes, path);
  const Fields f(lines, path);
  CheckpointHeader h;
  CheckpointContent& c = h.fields;
  c.problem = f.word("problem", {"sedov", "sod-x", "sod-y", "sod-z", "wave"});
  c.dim = static_cast<int>(f.integer("dim", 2, 3));
  c.blocks = static_cast<int>(f.integer("blocks", 1, INT_MAX));
  c.cells_per_block = static_cast<int>(f.integer("cells_per_block", guard_cells, INT_MAX));
  c.gamma = f.real("gamma");
  if (!(c.gamma > 1)) f.refuse("gamma", "gamma must exceed 1");
  c.cfl = f.real("cfl");
  if (!(c.cfl > 0 && c.cfl <= 1)) f.refuse("cfl", "a CFL number lies in (0, 1]");
  c.conduction = f.real("conduction");
  if (c.conduction < 0) f.refuse("conduction", "a conductivity is not negative");
  c.limiter = f.word("limiter", {"minmod", "mc"});
  c.boundary = f.word("boundary", {"periodic", "outflow"});
  c.time = f.real("time");
  if (c.time < 0) f.refuse("time", "a run's time is not negative");
  c.steps = static_cast<int>(f.integer("steps", 0, INT_MAX));
  c.max_level = static_cast<int>(f.integer("max_level", 0, 8));
  c.refine_above = f.real("refine_above");
  c.derefine_below = f.real("derefine_below");
  c.regrid_every = static_cast<int>(f.integer("regrid_every", 1, INT_MAX));
  c.initial_totals = initial_totals(f);
  h.leaves = f.integer("leaves", 1, INT_MAX);
  h.cells = f.integer("cells", 1, INT_MAX);
  h.checksum = checksum(f);
  h.checksummed = f.line_start("checksum");
  h.length = lines.length;
  check_consistency(h, f);
  return h;
}

}  // namespace korch::hydro
