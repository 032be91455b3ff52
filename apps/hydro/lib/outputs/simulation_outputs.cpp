// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Simulation::write_outputs: density.png (the annotated density field), trace.json and
// timeline.png (korch's merged trace and timeline calls), each written under a temporary name and
// renamed (korch/output_files.hpp).
#include "simulation.hpp"

#include "field_figure.hpp"
#include "image.hpp"

#include <korch/merged_trace.hpp>
#include <korch/output_files.hpp>
#include <korch/picture/axis.hpp>
#include <korch/timeline.hpp>

#include <fmt/format.h>

#include <filesystem>

namespace korch::hydro {

namespace {

std::string resolution(const std::array<int, 3>& n, int dim) {
  const bool cube = n[0] == n[1] && (dim == 2 || n[1] == n[2]);
  if (cube) return fmt::format("{}^{} cells", n[0], dim);
  return dim == 2 ? fmt::format("{} x {} cells", n[0], n[1]) : fmt::format("{} x {} x {} cells", n[0], n[1], n[2]);
}

}  // namespace

std::vector<TraceEvent> Simulation::all_ranks_events() const {
  return merge_over_ranks(last_events(), trace_.origin_ns(), comm_);
}

void Simulation::write_outputs() const {
  namespace fs = std::filesystem;
  // Collective: every rank takes part, rank 0 writes.
  const std::vector<double> rho = gather(0);
  const auto events = all_ranks_events();
  if (comm_.rank() != 0) return;
  prepare_output_directory(options_.out);
  const auto n = global_cells();
  const auto& spec = grid_->spec();
  const int dim = options_.dim;
  // In 3D the picture is the z layer through the middle of the domain.
  std::vector<double> slice(static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]));
  const std::size_t k = static_cast<std::size_t>(n[2] / 2);
  for (std::size_t c = 0; c < slice.size(); ++c) slice[c] = rho[c + slice.size() * k];

  FieldFigure figure;
  figure.variable = "density";
  figure.log_scale = options_.log_scale;
  figure.x_range = {spec.domain_lo[0], spec.domain_hi[0]};
  figure.y_range = {spec.domain_lo[1], spec.domain_hi[1]};
  figure.title.push_back(fmt::format("{} {}D, {}, t = {}, configuration {}", to_string(options_.problem), dim,
                                     resolution(n, dim), sci_label(time_), configuration_label()));
  std::string detail = fmt::format("density after {} steps; {}^{} blocks of {}^{} cells; {} threads/team", steps_,
                                   options_.blocks, dim, options_.cells_per_block, dim, options_.threads);
  if (dim == 3) {
    const double z = spec.domain_lo[2] + (static_cast<double>(k) + 0.5) * dx()[2];
    figure.title.push_back(fmt::format("mid-plane slice z = {:.4g} (cell layer {} of {}), x-y plane", z, k, n[2]));
  }
  figure.title.push_back(detail);
  const Image density = render_field_figure(slice, n[0], n[1], figure);
  write_png((fs::path(options_.out) / "density.png").string(), density);

  write_chrome_trace(events, (fs::path(options_.out) / "trace.json").string());
  const int cycles = recent_.kept();
  const std::string title =
      cycles == 0
          ? std::string("task timeline: no traced cycles")
          : fmt::format("task timeline: last {} cycle{} (steps {}-{}), configuration {}, {} threads/team{}", cycles,
                        cycles == 1 ? "" : "s", steps_ - cycles + 1, steps_, configuration_label(), options_.threads,
                        comm_.size() > 1 ? fmt::format(", {} ranks", comm_.size()) : std::string());
  TimelineOptions timeline;
  timeline.title = title;
  write_timeline_png(events, (fs::path(options_.out) / "timeline.png").string(), timeline);
}

}  // namespace korch::hydro
