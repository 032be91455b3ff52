// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Comparing the run's options over the ranks (see rank_agreement.hpp).
#include "rank_agreement.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <map>

namespace korch::hydro {

namespace {

std::string real(double x) { return fmt::format("{:.17g}", x); }

std::string or_not_given(const std::string& value) { return value.empty() ? "(not given)" : value; }

std::string plot_every(const PlotOptions& plot) {
  if (plot.every_steps > 0) return std::to_string(plot.every_steps);
  return plot.every_time > 0 ? real(plot.every_time) + "t" : "";
}

// One line per option: "--blocks=4\n".
std::string options_text(const std::vector<std::pair<std::string, std::string>>& options) {
  std::string text;
  for (const auto& [name, value] : options) text += name + "=" + value + "\n";
  return text;
}

// FNV-1a, 64 bits.
std::uint64_t digest(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// The values of one option over the ranks, each value with the ranks that hold it:
// "10 on rank 0, 20 on ranks 1, 2".
std::string values_by_rank(const std::vector<std::string>& values) {
  std::map<std::string, std::vector<int>> ranks_of;
  std::vector<std::string> order;
  for (std::size_t r = 0; r < values.size(); ++r) {
    if (ranks_of.find(values[r]) == ranks_of.end()) order.push_back(values[r]);
    ranks_of[values[r]].push_back(static_cast<int>(r));
  }
  std::string out;
  for (const auto& value : order) {
    const auto& ranks = ranks_of[value];
    out += fmt::format("{}{} on rank{} {}", out.empty() ? "" : ", ", or_not_given(value), ranks.size() > 1 ? "s" : "",
                       fmt::join(ranks, ", "));
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> run_shaping_options(const Options& o) {
  const Boundary boundary =
      o.boundary ? *o.boundary : (o.problem == Problem::wave ? Boundary::periodic : Boundary::outflow);
  return {
      {"--config", builtin_name(o.config)},
      {"--problem", to_string(o.problem)},
      {"--dim", std::to_string(o.dim)},
      {"--blocks", std::to_string(o.blocks)},
      {"--cells-per-block", std::to_string(o.cells_per_block)},
      {"--boundary", boundary == Boundary::periodic ? "periodic" : "outflow"},
      {"--limiter", o.limiter == Limiter::minmod ? "minmod" : "mc"},
      {"--cfl", real(o.cfl)},
      {"gamma", real(o.gamma)},
      {"--conduction", o.conduction > 0 ? real(o.conduction) : ""},
      {"--steps", o.steps > 0 ? std::to_string(o.steps) : ""},
      {"--tmax", o.tmax > 0 ? real(o.tmax) : ""},
      {"--plan/--operation", o.operation},
      {"--restart", o.restart},
      {"--out", o.out},
      {"--checkpoint-every", std::to_string(o.checkpoint_every)},
      {"--plot-every", plot_every(o.plot)},
      {"--plot-dir", o.plot.dir},
      {"--plot-prefix", o.plot.prefix},
      {"--log", o.log_scale ? "on" : ""},
  };
}

std::string rank_disagreement(const Communicator& ranks, const Options& options, const std::string& own_error) {
  if (ranks.size() == 1) return "";
  const auto mine = run_shaping_options(options);
  // A refused command line gives a digest of its own: the others learn of it in the same message.
  const std::string text = own_error.empty() ? options_text(mine) : "refused\n" + own_error;
  const std::vector<std::uint64_t> digests = ranks.all_gather(std::vector<std::uint64_t>{digest(text)});
  bool agree = true;
  for (const auto d : digests) agree = agree && d == digests[0];
  if (agree) return "";  // the same options, or the same refusal, which each rank reports itself
  // Every rank has seen the same digests, so every rank gathers the same texts from here on.
  std::string refused;
  const std::vector<std::string> errors = ranks.all_gather(own_error);
  for (std::size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty()) refused += fmt::format("{}rank {}: {}", refused.empty() ? "" : "; ", r, errors[r]);
  if (!refused.empty())
    return fmt::format("another rank of this run refused its command line ({}): every rank stops", refused);
  std::string differ;
  for (const auto& [name, value] : mine) {
    const std::vector<std::string> all = ranks.all_gather(value);
    bool same = true;
    for (const auto& v : all) same = same && v == all[0];
    if (!same) differ += fmt::format("{}option {}: {}", differ.empty() ? "" : "; ", name, values_by_rank(all));
  }
  return fmt::format(
      "the ranks of this run were given different options ({}): give every rank the same options "
      "(only --threads, --tile, --packet-blocks, --device-kernel, --split-even, --host-parallel and --quiet may "
      "differ)",
      differ.empty() ? "the same values, but a different build of korch-hydro" : differ);
}

}  // namespace korch::hydro
