// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which run a plot series belongs to (see plot_series.hpp).
#include "plot_series.hpp"

#include "checksum_line.hpp"
#include "rank_agreement.hpp"

#include <korch/error.hpp>
#include <korch/input_files.hpp>
#include <korch/output_files.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <sstream>

namespace korch::hydro {

namespace {

constexpr const char* kHeader = "korch-hydro plot series";
constexpr const char* kRecordChecksumPrefix = "checksum ";
// The options series_identity keeps (run_shaping_options' spelling), and --max-level.
constexpr const char* kIdentityOptions[] = {"--problem", "--dim", "--blocks", "--cells-per-block", "--boundary",
                                            "--limiter", "--cfl", "gamma",    "--conduction",      "--max-level"};
// A record lists at most every step of a run's plots; anything larger is not one.
constexpr std::size_t kLargestRecord = std::size_t{1} << 24;

bool is_identity_option(const std::string& key) {
  return std::find_if(std::begin(kIdentityOptions), std::end(kIdentityOptions),
                      [&](const char* option) { return key == option; }) != std::end(kIdentityOptions);
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw Error::format("plot series record '{}' {}: remove it, or choose another --plot-dir or --plot-prefix", path,
                      why);
}

// The record's text, its checksum line checked and removed. Only a regular file is read (a FIFO or
// a device is refused at once).
std::string checked_text(const std::string& path) {
  std::string text;
  try {
    text = read_regular_file(path, kLargestRecord, "plot series record");
  } catch (const Error& e) {
    throw Error::format("{}: remove it, or choose another --plot-dir or --plot-prefix", e.what());
  }
  std::optional<std::string> before = text_before_checksum(text, kRecordChecksumPrefix, "");
  if (!before)
    refuse(path,
           "fails its checksum (its last line must be 'checksum fnv1a64 ' and the FNV-1a of the lines before "
           "it in 16 hexadecimal digits)");
  return *before;
}

// "plots 0 2 4": the steps, each a non-negative integer above the one before.
bool parse_steps(const std::string& value, std::vector<int>& steps) {
  std::istringstream in(value);
  std::string word;
  while (in >> word) {
    std::size_t used = 0;
    int step = -1;
    try {
      step = std::stoi(word, &used);
    } catch (const std::exception&) {
      return false;
    }
    if (used != word.size() || step < 0 || (!steps.empty() && step <= steps.back())) return false;
    steps.push_back(step);
  }
  return true;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> series_identity(const Options& options) {
  std::vector<std::pair<std::string, std::string>> identity;
  for (const auto& option : run_shaping_options(options))
    if (option.first != "--max-level" && is_identity_option(option.first)) identity.push_back(option);
  // An adaptive run's plots are another mesh than a uniform run's of the same grid.
  if (options.max_level > 0) identity.emplace_back("--max-level", std::to_string(options.max_level));
  return identity;
}

std::string series_record_path(const std::string& folder, const std::string& prefix) {
  return (std::filesystem::path(folder) / (prefix + ".series")).string();
}

std::optional<SeriesRecord> read_series_record(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::istringstream in(checked_text(path));
  std::string line;
  if (!std::getline(in, line) || line != kHeader) refuse(path, fmt::format("does not begin with '{}'", kHeader));
  SeriesRecord record;
  bool plots = false;
  for (int number = 2; std::getline(in, line); ++number) {
    const auto space = line.find(' ');
    const std::string key = line.substr(0, space), value = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "plots" && !plots && parse_steps(value, record.cycles)) {
      plots = true;
    } else if (space != std::string::npos && is_identity_option(key) && !plots) {
      record.identity.emplace_back(key, value);
    } else {
      refuse(path, fmt::format("line {} ('{}') is not an option of the run and its value, nor the one 'plots' line "
                               "of ascending steps after them",
                               number, line));
    }
  }
  if (!plots) refuse(path, "has no 'plots' line");
  return record;
}

void write_series_record(const std::string& path, const SeriesRecord& record) {
  std::string text = std::string(kHeader) + "\n";
  for (const auto& [option, value] : record.identity) text += option + " " + value + "\n";
  text += "plots";
  for (const int step : record.cycles) text += " " + std::to_string(step);
  text += "\n";
  text += checksum_line(text, kRecordChecksumPrefix, "");
  write_text_file_atomically(path, text);
}

std::string series_difference(const SeriesRecord& there, const std::vector<std::pair<std::string, std::string>>& here) {
  std::string out;
  for (const auto& [option, value] : here) {
    std::string theirs = "(not recorded)";
    for (const auto& t : there.identity)
      if (t.first == option) theirs = t.second;
    if (theirs != value)
      out += fmt::format("{}{} {} there, {} here", out.empty() ? "" : "; ", option,
                         theirs.empty() ? "(not given)" : theirs, value.empty() ? "(not given)" : value);
  }
  return out;
}

}  // namespace korch::hydro
