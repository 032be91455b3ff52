// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the adaptive-mesh hydro job reports, the same on any number of ranks: the conserved totals,
// the state hash, the leaves per level, the summary table and density.png with each leaf's outline
// in its level's colour. The ranks own contiguous pieces of the Morton curve in rank order, so
// every rank's per-leaf figures gathered in rank order are the leaves in Morton order.
#include "amr_simulation.hpp"

#include "configuration_names.hpp"
#include "field_figure.hpp"
#include "fnv1a64.hpp"
#include "hydro_operation.hpp"
#include "image.hpp"

#include <korch/output_files.hpp>
#include <korch/picture/axis.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

namespace korch::hydro {

namespace {

// Leaf outlines, finest last: white, black, magenta, cyan, then again.
constexpr Rgb kLevelColours[] = {{255, 255, 255}, {0, 0, 0}, {255, 0, 255}, {0, 255, 255}};
constexpr const char* kLevelColourNames[] = {"white", "black", "magenta", "cyan"};

// The cell of leaf array `a` at interior cell (i, j, k), variable v.
double cell_of(const BlockArray& a, const ForestMeshShape& s, int v, int i, int j, int k) {
  return a.data[v * a.stride[0] + (i + s.guard[0]) * a.stride[1] + (j + s.guard[1]) * a.stride[2] +
                (k + s.guard[2]) * a.stride[3]];
}

// The picture's plane: the finest lattice's cell layer through the middle of z (0 in 2D), and
// whether a leaf cuts it.
struct Plane {
  std::int64_t nx = 0, ny = 0, layer = 0;
  int finest = 0;
  bool cuts(const BlockKey& leaf, const ForestMeshShape& s) const {
    if (s.forest.dims < 3) return true;
    const std::int64_t f = std::int64_t{1} << (finest - leaf.level);
    const std::int64_t lo = leaf.position[2] * s.cells[2] * f;
    return layer >= lo && layer < lo + s.cells[2] * f;
  }
};

Plane plane_of(const ForestMeshShape& s) {
  Plane p;
  p.finest = s.forest.max_level;
  p.nx = std::int64_t{s.forest.roots[0]} * s.cells[0] << p.finest;
  p.ny = std::int64_t{s.forest.roots[1]} * s.cells[1] << p.finest;
  if (s.forest.dims == 3) p.layer = (std::int64_t{s.forest.roots[2]} * s.cells[2] << p.finest) / 2;
  return p;
}

void draw_outline(Image& image, const FieldFigureLayout& layout, const FieldFigure& figure, const double (&lo)[2],
                  const double (&hi)[2], Rgb colour) {
  const int x0 = layout.x_of(lo[0], figure), x1 = layout.x_of(hi[0], figure);
  const int y0 = layout.y_of(hi[1], figure), y1 = layout.y_of(lo[1], figure);
  const auto put = [&](int x, int y) {
    if (x < layout.plot_left || x >= layout.plot_left + layout.plot_width || y < layout.plot_top ||
        y >= layout.plot_top + layout.plot_height)
      return;
    std::memcpy(&image.rgb[3 * (static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) +
                                static_cast<std::size_t>(x))],
                colour.data(), 3);
  };
  for (int x = x0; x <= x1; ++x) {
    put(x, y0);
    put(x, y1);
  }
  for (int y = y0; y <= y1; ++y) {
    put(x0, y);
    put(x1, y);
  }
}

}  // namespace

std::array<double, 5> AmrSimulation::totals() const {
  const ForestMeshShape& s = mesh_->shape();
  std::vector<double> mine;
  for (int b = 0; b < static_cast<int>(mesh_->own_leaves().size()); ++b) {
    const BlockArray& a = mesh_->array(b);
    const auto h = mesh_->cell_size(mesh_->own_leaves()[static_cast<std::size_t>(b)].level);
    const double volume = h[0] * h[1] * (s.forest.dims == 3 ? h[2] : 1.0);
    for (int v = 0; v < n_cons; ++v) {
      double t = 0;
      for (int k = 0; k < s.cells[2]; ++k)
        for (int j = 0; j < s.cells[1]; ++j)
          for (int i = 0; i < s.cells[0]; ++i) t += cell_of(a, s, state_ + v, i, j, k) * volume;
      mine.push_back(t);
    }
  }
  const std::vector<double> all = comm_.size() > 1 ? comm_.all_gather(mine) : mine;
  std::array<double, 5> sum{};
  for (std::size_t n = 0; n < all.size(); ++n) sum[n % n_cons] += all[n];
  return sum;
}

std::uint64_t AmrSimulation::state_hash() const {
  const ForestMeshShape& s = mesh_->shape();
  std::vector<std::uint64_t> mine;
  for (int b = 0; b < static_cast<int>(mesh_->own_leaves().size()); ++b) {
    const BlockKey& leaf = mesh_->own_leaves()[static_cast<std::size_t>(b)];
    const BlockArray& a = mesh_->array(b);
    Fnv1a64 h;
    h.add(&leaf.level, sizeof leaf.level);
    h.add(leaf.position.data(), sizeof leaf.position);
    for (int v = 0; v < n_cons; ++v)
      for (int k = 0; k < s.cells[2]; ++k)
        for (int j = 0; j < s.cells[1]; ++j)
          for (int i = 0; i < s.cells[0]; ++i) {
            const double x = cell_of(a, s, state_ + v, i, j, k);
            h.add(&x, sizeof x);
          }
    mine.push_back(h.value());
  }
  const std::vector<std::uint64_t> all = comm_.size() > 1 ? comm_.all_gather(mine) : mine;
  Fnv1a64 h;
  for (const std::uint64_t leaf : all) h.add(&leaf, sizeof leaf);
  return h.value();
}

std::vector<int> AmrSimulation::leaves_per_level() const {
  std::vector<int> n(static_cast<std::size_t>(options_.max_level + 1), 0);
  for (const BlockKey& leaf : mesh_->forest().leaves()) ++n[static_cast<std::size_t>(leaf.level)];
  return n;
}

std::vector<double> AmrSimulation::density_on_finest_lattice() const {
  const ForestMeshShape& s = mesh_->shape();
  const Plane plane = plane_of(s);
  // This rank's leaves that cut the plane, their cells of the plane in (j, i) order.
  std::vector<double> mine;
  for (int b = 0; b < static_cast<int>(mesh_->own_leaves().size()); ++b) {
    const BlockKey& leaf = mesh_->own_leaves()[static_cast<std::size_t>(b)];
    if (!plane.cuts(leaf, s)) continue;
    const std::int64_t f = std::int64_t{1} << (plane.finest - leaf.level);
    const int k = s.forest.dims == 3 ? static_cast<int>(plane.layer / f - leaf.position[2] * s.cells[2]) : 0;
    for (int j = 0; j < s.cells[1]; ++j)
      for (int i = 0; i < s.cells[0]; ++i) mine.push_back(cell_of(mesh_->array(b), s, state_, i, j, k));
  }
  const std::vector<double> all = comm_.size() > 1 ? comm_.all_gather(mine) : mine;
  std::vector<double> lattice(static_cast<std::size_t>(plane.nx * plane.ny), std::nan(""));
  std::size_t next = 0;
  for (const BlockKey& leaf : mesh_->forest().leaves()) {
    if (!plane.cuts(leaf, s)) continue;
    const std::int64_t f = std::int64_t{1} << (plane.finest - leaf.level);
    for (std::int64_t j = 0; j < s.cells[1]; ++j)
      for (std::int64_t i = 0; i < s.cells[0]; ++i) {
        const double rho = all.at(next++);
        const std::int64_t I = (leaf.position[0] * s.cells[0] + i) * f, J = (leaf.position[1] * s.cells[1] + j) * f;
        for (std::int64_t y = J; y < J + f; ++y)
          for (std::int64_t x = I; x < I + f; ++x) lattice[static_cast<std::size_t>(x + plane.nx * y)] = rho;
      }
  }
  return lattice;
}

void AmrSimulation::write_outputs() const {
  const std::vector<double> rho = density_on_finest_lattice();
  if (comm_.rank() != 0 || !options_.write_output) return;
  prepare_output_directory(options_.out);
  const ForestMeshShape& s = mesh_->shape();
  const Plane plane = plane_of(s);
  const auto levels = leaves_per_level();
  FieldFigure figure;
  figure.variable = "density";
  figure.log_scale = options_.log_scale;
  figure.x_range = {s.domain_lo[0], s.domain_hi[0]};
  figure.y_range = {s.domain_lo[1], s.domain_hi[1]};
  figure.title.push_back(fmt::format("{} {}D on an adaptive mesh, t = {}, configuration {}",
                                     to_string(options_.problem), options_.dim, sci_label(time_),
                                     configuration_label(options_)));
  std::string legend = "block outlines by level:";
  for (std::size_t l = 0; l < levels.size(); ++l)
    legend += fmt::format(" {} {} ({} blocks)", l, kLevelColourNames[l % 4], levels[l]);
  figure.title.push_back(legend);
  figure.title.push_back(fmt::format("{}^{} root blocks of {}^{} cells; finest level {} ({} x {} cells){}",
                                     options_.blocks, options_.dim, options_.cells_per_block, options_.dim,
                                     plane.finest, plane.nx, plane.ny, options_.dim == 3 ? "; mid-plane z = 0.5" : ""));
  const int nx = static_cast<int>(plane.nx), ny = static_cast<int>(plane.ny);
  const FieldFigureLayout layout = field_figure_layout(rho, nx, ny, figure);
  Image image = render_field_figure(rho, nx, ny, figure);
  for (int level = 0; level <= plane.finest; ++level)
    for (const BlockKey& leaf : mesh_->forest().leaves()) {
      if (leaf.level != level || !plane.cuts(leaf, s)) continue;
      const auto h = mesh_->cell_size(level);
      const double lo[2] = {s.domain_lo[0] + static_cast<double>(leaf.position[0] * s.cells[0]) * h[0],
                            s.domain_lo[1] + static_cast<double>(leaf.position[1] * s.cells[1]) * h[1]};
      const double hi[2] = {lo[0] + s.cells[0] * h[0], lo[1] + s.cells[1] * h[1]};
      draw_outline(image, layout, figure, lo, hi, kLevelColours[level % 4]);
    }
  write_png((std::filesystem::path(options_.out) / "density.png").string(), image);
}

std::string AmrSimulation::summary() const {
  const auto now = totals();
  const std::uint64_t hash = state_hash();
  const auto levels = leaves_per_level();
  const ForestMeshShape& s = mesh_->shape();
  const double cells_per_leaf = static_cast<double>(s.cells[0]) * s.cells[1] * s.cells[2];
  const Plane plane = plane_of(s);
  double finest_cells = static_cast<double>(plane.nx) * static_cast<double>(plane.ny);
  if (s.forest.dims == 3)
    finest_cells *= static_cast<double>(std::int64_t{s.forest.roots[2]} * s.cells[2] << plane.finest);
  std::string per_level;
  for (std::size_t l = 0; l < levels.size(); ++l) per_level += fmt::format("{}{}: {}", l ? ", " : "", l, levels[l]);
  const int leaves = mesh_->forest().n_leaves();
  const double total = phases_.total() > 0 ? phases_.total() : 1.0;
  const auto share = [&](double t) { return 100.0 * t / total; };
  std::string out = fmt::format(
      "korch-hydro, adaptive mesh: {} {}D, {}^{} root blocks of {}^{} cells, levels 0..{}, configuration {}, "
      "{} rank(s) x {} threads\n",
      to_string(options_.problem), options_.dim, options_.blocks, options_.dim, options_.cells_per_block, options_.dim,
      options_.max_level, configuration_label(options_), comm_.size(), options_.threads);
  out +=
      fmt::format("  steps {}, t = {:.6g}, regrids {} (every {} steps), blocks shared among ranks by {}{}\n", steps_,
                  time_, regrids_, options_.regrid_every, options_.balance,
                  comm_.size() > 1 && options_.balance == "cost" ? fmt::format(" ({} moved by rebalances)", migrated_)
                                                                 : std::string());
  out +=
      fmt::format("  leaves per level {}: {} leaves, {:.0f} cells ({:.1f} % of the finest level's {:.0f})\n", per_level,
                  leaves, leaves * cells_per_leaf, 100.0 * leaves * cells_per_leaf / finest_cells, finest_cells);
  out += fmt::format("  cell updates {:.4g} in {:.3f} s: {:.4g} per second\n", cell_updates_, run_seconds_,
                     run_seconds_ > 0 ? cell_updates_ / run_seconds_ : 0.0);
  out += fmt::format(
      "  rank 0's time: fill cycles (guard cells, time steps) {:.1f} %, hydro cycles{} {:.1f} %, flux correction "
      "{:.1f} "
      "%, time-step reduction {:.1f} %, regrid {:.1f} %\n",
      share(phases_.guard_fill), fused_ ? " (with each leaf's guard fill and time step)" : "", share(phases_.execute),
      share(phases_.flux_correction), share(phases_.time_step), share(phases_.regrid));
  if (options_.conduction > 0)
    out += fmt::format("  conduction (CG on the composite mesh) {:.1f} %\n", share(phases_.conduction));
  if (comm_.size() > 1) {
    // What the last leaves' guard fill copies between ranks (docs/adaptive-mesh.md, "On ranks").
    const std::int64_t sent = comm_.sum(static_cast<std::int64_t>(mesh_->ghost_values_sent()));
    out += fmt::format("  guard-cell copies between ranks: {} doubles per fill ({:.3f} per leaf cell)\n", sent,
                       static_cast<double>(sent) / (leaves * cells_per_leaf));
  }
  static const char* names[] = {"mass", "x-momentum", "y-momentum", "z-momentum", "energy"};
  for (int v = 0; v < n_cons; ++v) {
    if (v >= 1 && v <= 3 && v > options_.dim) continue;
    const double before = initial_totals_[static_cast<std::size_t>(v)], after = now[static_cast<std::size_t>(v)];
    // A total that starts at zero (a momentum at rest) changes by an amount, not a ratio.
    const bool relative = std::abs(before) > 1e-12 * std::abs(initial_totals_[0]);
    out += fmt::format("  {:<10} {:+.15e} (change {:+.3e}{})\n", names[v], after,
                       relative ? (after - before) / std::abs(before) : after - before, relative ? " relative" : "");
  }
  if ((options_.config == HydroConfiguration::action_parallel || operation_) && steps_ > 0) {
    const BlockDiagnostics d = diagnostics();
    out += fmt::format("  {} diagnostics of the last step's state: mass {:.15e}, density {:.4e} .. {:.4e}\n",
                       operation_ ? "the plan's" : "the device team's", d.mass, d.rho_min, d.rho_max);
  }
  out += fmt::format("  state hash {:016x}\n", hash);
  return out;
}

}  // namespace korch::hydro
