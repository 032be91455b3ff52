// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A run's plot files (see plot_writer.hpp).
#include "plot_writer.hpp"

#include "checksum_line.hpp"
#include "host_cells.hpp"
#include "plot_series.hpp"
#include "simulation.hpp"

#include <korch/error.hpp>
#include <korch/input_files.hpp>
#include <korch/output_files.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <optional>

namespace korch::hydro {

namespace {

std::string plot_folder(const PlotOptions& plot, const std::string& out) { return plot.dir.empty() ? out : plot.dir; }

// A plot's own XDMF file, which a continued run reads back, ends with an XML comment holding the
// FNV-1a checksum of the bytes before it (a comment after the root element is still well-formed XML).
constexpr const char* kXdmfChecksumPrefix = "<!-- korch-hydro checksum ";
constexpr const char* kXdmfChecksumSuffix = " -->";

// The text of a plot's XDMF file before its checksum comment; throws korch::Error naming the file
// when it is not a regular file of a plausible size, or the comment is missing or does not match.
std::string verified_plot_xdmf(const std::string& path) {
  constexpr std::size_t largest = std::size_t{1} << 28;  // an adaptive plot's grid per leaf, with room
  const std::string fix = "remove it and its .h5 file, or choose another --plot-dir or --plot-prefix";
  std::string text;
  try {
    text = read_regular_file(path, largest, "plot file");
  } catch (const Error& e) {
    throw Error::format("{}: {}", e.what(), fix);
  }
  std::optional<std::string> before = text_before_checksum(text, kXdmfChecksumPrefix, kXdmfChecksumSuffix);
  if (!before)
    throw Error::format(
        "plot file '{}' is damaged (its last line is not the checksum of the lines before it), so this continued "
        "run cannot list it in its series: {}",
        path, fix);
  return *before;
}

// The plots an earlier run wrote into `folder` before step `cycle`, in step order: their steps and
// PREFIX_<step>.xmf files (those whose .h5 file is there too). A run continued from a checkpoint
// lists those its series record names first in its series, so that the series spans the whole
// simulation; the earlier run's plots from `cycle` on are left out, since the continued run writes
// them again.
std::vector<std::pair<int, std::string>> earlier_plots(const std::string& folder, const std::string& prefix,
                                                       int cycle) {
  namespace fs = std::filesystem;
  const std::string head = prefix + "_";
  std::vector<std::pair<int, std::string>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= head.size() + 4 || name.compare(0, head.size(), head) != 0 ||
        name.compare(name.size() - 4, 4, ".xmf") != 0) {
      continue;
    }
    const std::string digits = name.substr(head.size(), name.size() - head.size() - 4);
    if (digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const int step = std::stoi(digits);
    const fs::path h5 = entry.path().parent_path() / (name.substr(0, name.size() - 4) + ".h5");
    if (step >= cycle || !fs::exists(h5, ec)) continue;
    found.emplace_back(step, entry.path().string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return found;
}

// The XDMF grid of a plot's own file, checked: a single-plot file is xdmf_document({grid}, false)
// and its checksum comment, so the grid is all of its Domain.
std::string plot_grid(const std::string& path) {
  const std::string text = verified_plot_xdmf(path);
  const std::string open = "  <Domain>\n", close = "  </Domain>";
  const auto from = text.find(open);
  const auto to = text.rfind(close);
  if (from == std::string::npos || to == std::string::npos || to < from + open.size())
    throw Error::format(
        "plot file '{}' holds no XDMF Domain: remove it and its .h5 file, or choose another "
        "--plot-dir or --plot-prefix",
        path);
  return text.substr(from + open.size(), to - from - open.size());
}

}  // namespace

void add_flow_variables(PlotFrame& f, std::size_t n, double gamma,
                        const std::function<double(std::size_t cell, int var)>& conserved) {
  std::vector<double> rho(n), v[3] = {std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)}, p(n),
                              e(n);
  for (std::size_t c = 0; c < n; ++c) {
    rho[c] = conserved(c, 0);
    double kinetic = 0.0;
    for (int d = 0; d < 3; ++d) {
      const double m = conserved(c, 1 + d);
      v[d][c] = m / rho[c];
      kinetic += 0.5 * m * v[d][c];
    }
    e[c] = conserved(c, 4);
    p[c] = (gamma - 1.0) * (e[c] - kinetic);
  }
  // Code units: mass M, length L, time T of the problem's set-up (docs/plot-files.md).
  f.variables.push_back({"density", "mass density", "M L^-3", std::move(rho)});
  const char* axis[3] = {"x", "y", "z"};
  for (int d = 0; d < f.dim; ++d)
    f.variables.push_back({fmt::format("velocity_{}", axis[d]), fmt::format("velocity, {} component", axis[d]),
                           "L T^-1", std::move(v[d])});
  f.variables.push_back({"pressure", "pressure", "M L^-1 T^-2", std::move(p)});
  f.variables.push_back({"energy", "total energy density (internal + kinetic)", "M L^-1 T^-2", std::move(e)});
}

PlotFrame plot_frame(const Simulation& sim) {
  const Grid& grid = sim.grid();
  const auto& spec = grid.spec();
  PlotFrame f;
  f.dim = sim.options().dim;
  f.cells = sim.global_cells();
  f.spacing = sim.dx();
  f.origin = spec.domain_lo;
  f.time = sim.time();
  f.cycle = sim.steps_done();
  f.problem = to_string(sim.options().problem);
  for (const auto& m : grid.blocks()) {
    PlotBox b;
    for (std::size_t d = 0; d < 3; ++d) {
      b.lo[d] = m.index[d] * spec.block_cells[d];
      b.hi[d] = b.lo[d] + spec.block_cells[d];
    }
    f.boxes.push_back(b);
  }
  // The rank's cells in ascending global index, the order in which HDF5 fills its selection.
  struct Cell {
    std::size_t global;
    int block, i, j, k;
  };
  std::vector<Cell> cells;
  for_each_interior_cell(grid, [&](int b, int i, int j, int k, std::size_t c) { cells.push_back({c, b, i, j, k}); });
  std::sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) { return a.global < b.global; });

  const int s = sim.state();
  add_flow_variables(f, cells.size(), sim.options().gamma, [&](std::size_t c, int var) {
    const Cell& x = cells[c];
    return host_var(grid, x.block, s + var)(x.i, x.j, x.k);
  });
  return f;
}

PlotRun plot_run(const Simulation& sim) {
  return PlotRun{&sim.options(), sim.communicator(), [&sim] { return sim.steps_done(); }, [&sim] { return sim.time(); },
                 [&sim] { return plot_frame(sim); }};
}

PlotWriter::PlotWriter(PlotRun run)
    : run_(std::move(run)), plot_(run_.options->plot), schedule_(plot_, run_.steps_done(), run_.time()) {
  if (!plot_.enabled()) return;
  if (run_.comm.rank() == 0) prepare_output_directory(folder());
  run_.comm.barrier();  // every rank opens the file in it
  if (run_.steps_done() > 0) {
    // Rank 0 reads the folder; every rank stops alike when it holds another run's series.
    std::string refusal = run_.comm.rank() == 0 ? continue_series() : "";
    if (run_.comm.size() > 1) refusal = run_.comm.all_gather(refusal)[0];
    if (!refusal.empty()) throw Error(refusal);
  }
  write();
}

std::string PlotWriter::continue_series() {
  const std::string record_path = series_record_path(folder(), plot_.prefix);
  const auto identity = series_identity((*run_.options));
  const auto earlier = earlier_plots(folder(), plot_.prefix, run_.steps_done());
  std::optional<SeriesRecord> record;
  try {
    record = read_series_record(record_path);
  } catch (const Error& e) {
    return e.what();
  }
  const std::string fix = fmt::format("write this run's plots to another --plot-dir or --plot-prefix, or remove {}*",
                                      (std::filesystem::path(folder()) / plot_.prefix).string());
  if (!record) {
    if (earlier.empty()) return "";
    return fmt::format(
        "option --plot-dir: {} holds plots {}_<step> of a run without a series record ({}), so this "
        "continued run cannot tell whether they are its own: {}",
        folder(), plot_.prefix, record_path, fix);
  }
  const std::string difference = series_difference(*record, identity);
  if (!difference.empty())
    return fmt::format("option --plot-dir: the plot series {} in {} is another run's ({}): {}", plot_.prefix, folder(),
                       difference, fix);
  for (const auto& [step, path] : earlier) {
    if (std::find(record->cycles.begin(), record->cycles.end(), step) == record->cycles.end()) continue;
    try {
      series_.push_back(plot_grid(path));
    } catch (const Error& e) {
      return e.what();
    }
    cycles_.push_back(step);
  }
  return "";
}

std::string plot_series_path(const PlotOptions& plot, const std::string& out) {
  return (std::filesystem::path(plot_folder(plot, out)) / (plot.prefix + ".xmf")).string();
}

std::string PlotWriter::folder() const { return plot_folder(plot_, (*run_.options).out); }

std::string PlotWriter::h5_name(int cycle) const { return fmt::format("{}_{:06d}.h5", plot_.prefix, cycle); }

double PlotWriter::max_dt() const { return plot_.enabled() ? schedule_.max_dt(run_.time()) : 1e300; }

void PlotWriter::after_step() {
  if (plot_.enabled() && schedule_.due(run_.steps_done(), run_.time())) write();
}

void PlotWriter::finish() {
  if (plot_.enabled() && last_cycle_ != run_.steps_done()) write();
}

void PlotWriter::write() {
  namespace fs = std::filesystem;
  const PlotFrame frame = run_.frame();
  const std::string h5 = h5_name(frame.cycle);
  write_plot_file((fs::path(folder()) / h5).string(), frame, run_.comm);
  last_cycle_ = frame.cycle;
  series_.push_back(xdmf_grid(frame, h5));
  cycles_.push_back(frame.cycle);
  if (run_.comm.rank() != 0) return;
  const std::string stem = h5.substr(0, h5.size() - 3);
  const std::string own = xdmf_document({series_.back()}, false);
  write_text_file_atomically((fs::path(folder()) / (stem + ".xmf")).string(),
                             own + checksum_line(own, kXdmfChecksumPrefix, kXdmfChecksumSuffix));
  write_text_file_atomically((fs::path(folder()) / (plot_.prefix + ".xmf")).string(), xdmf_document(series_, true));
  write_series_record(series_record_path(folder(), plot_.prefix),
                      SeriesRecord{series_identity((*run_.options)), cycles_});
}

}  // namespace korch::hydro
