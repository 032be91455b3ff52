// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Which run a plot series belongs to (see plot_series.hpp).
#include "plot_series.hpp"

#include "rank_agreement.hpp"

#include <korch/error.hpp>
#include <korch/output_files.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace korch::hydro {

namespace {

constexpr const char* kHeader = "korch-hydro plot series";

}  // namespace

std::vector<std::pair<std::string, std::string>> series_identity(const Options& options) {
  static const char* const kept[] = {"--problem", "--dim", "--blocks", "--cells-per-block", "--boundary",
                                     "--limiter", "--cfl", "gamma",    "--conduction"};
  std::vector<std::pair<std::string, std::string>> identity;
  for (const auto& option : run_shaping_options(options))
    if (std::find(std::begin(kept), std::end(kept), option.first) != std::end(kept)) identity.push_back(option);
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
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line) || line != kHeader)
    throw Error::format(
        "plot series record '{}' cannot be read (its first line is not '{}'): remove it, or choose "
        "another --plot-dir or --plot-prefix",
        path, kHeader);
  SeriesRecord record;
  while (std::getline(in, line)) {
    const auto space = line.find(' ');
    if (space == std::string::npos) continue;
    const std::string key = line.substr(0, space), value = line.substr(space + 1);
    if (key == "plots") {
      std::istringstream steps(value);
      for (int step = 0; steps >> step;) record.cycles.push_back(step);
    } else {
      record.identity.emplace_back(key, value);
    }
  }
  return record;
}

void write_series_record(const std::string& path, const SeriesRecord& record) {
  std::string text = std::string(kHeader) + "\n";
  for (const auto& [option, value] : record.identity) text += option + " " + value + "\n";
  text += "plots";
  for (const int step : record.cycles) text += " " + std::to_string(step);
  text += "\n";
  write_file_atomically(path, [&](const std::string& temporary) {
    std::ofstream out(temporary, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw Error::format("cannot write '{}': check the free space and permissions", path);
  });
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
