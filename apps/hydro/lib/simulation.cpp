#include "simulation.hpp"

#include "host_cells.hpp"
#include "hydro_routines.hpp"

#include "output_files.hpp"
#include "progress.hpp"
#if __has_include("conduction.hpp")
#include "conduction.hpp"
#define KORCH_HYDRO_HAVE_CONDUCTION 1
#endif

#include <korch/block.hpp>
#include <korch/bundle.hpp>
#include <korch/configurations/builtin.hpp>
#include <korch/data_packet.hpp>
#include <korch/error.hpp>
#include <korch/tile.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <type_traits>

namespace korch::hydro {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr double kPi = 3.14159265358979323846;

}  // namespace

const char* to_string(Problem problem) noexcept {
  switch (problem) {
    case Problem::sedov: return "sedov";
    case Problem::sod_x: return "sod-x";
    case Problem::sod_y: return "sod-y";
    case Problem::sod_z: return "sod-z";
    case Problem::wave: return "wave";
  }
  return "?";
}

double default_tmax(Problem problem) {
  switch (problem) {
    case Problem::sedov: return 0.05;
    case Problem::wave: return 0.25;
    default: return 0.2;
  }
}

void validate(const Options& o) {
  if (o.config != "cpu" && o.config != "device" && o.config != "split" && o.config != "action-parallel")
    throw Error::format("option --config: unknown configuration '{}': use cpu, device, split or action-parallel", o.config);
  if (o.dim != 2 && o.dim != 3) throw Error::format("option --dim: {} is not supported: use 2 or 3", o.dim);
  if (o.threads < 1 || o.threads > 64) throw Error::format("option --threads: {} is out of range: use 1 to 64", o.threads);
  if (o.blocks < 1) throw Error::format("option --blocks: {} blocks per direction: use 1 or more", o.blocks);
  if (o.cells_per_block < guard_cells)
    throw Error::format("option --cells-per-block: {} is below the stencil's {} guard cells: use {} or more",
                        o.cells_per_block, guard_cells, guard_cells);
  if (o.tile < 0 || o.tile > o.cells_per_block)
    throw Error::format("option --tile: {} must be between 1 and --cells-per-block ({}), or 0 for whole blocks", o.tile,
                        o.cells_per_block);
  if (o.tile > 0 && o.config == "device")
    throw Error("option --tile makes no sense with --config device: the device team processes whole blocks in "
                "packets; use --packet-blocks, or --config cpu|split|action-parallel");
  if (o.packet_blocks < 1) throw Error::format("option --packet-blocks: {}: use 1 or more", o.packet_blocks);
  if (o.steps < 0) throw Error::format("option --steps: {}: use 1 or more", o.steps);
  if (o.tmax < 0) throw Error::format("option --tmax: {}: use a positive time", o.tmax);
  if (o.steps > 0 && o.tmax > 0)
    throw Error("options --steps and --tmax make no sense together: give one (--steps N runs N steps, --tmax T runs to time T)");
  if (o.problem == Problem::sod_z && o.dim != 3)
    throw Error("option --problem sod-z makes no sense with --dim 2: use --dim 3 or sod-x / sod-y");
  if (o.conduction < 0) throw Error::format("option --conduction: kappa {} is negative: use a positive value", o.conduction);
  if (!(o.cfl > 0 && o.cfl <= 1.0)) throw Error::format("option --cfl: {} is out of range (0, 1]", o.cfl);
  if (!(o.gamma > 1.0)) throw Error::format("gamma {} must exceed 1", o.gamma);
  if (o.problem == Problem::sedov && o.boundary == Boundary::periodic && o.blocks * o.cells_per_block % 2 != 0)
    throw Error("problem sedov needs an even number of cells per direction");
}

Configuration make_configuration(const Options& o) {
  Configuration c;
  PacketVariables hydro_vars;
  for (int v = 0; v < n_cons; ++v) {
    hydro_vars.copy_in.push_back(v);
    hydro_vars.copy_out.push_back(var_new + v);
  }
  if (o.config == "cpu") {
    c = configurations::get("cpu_only");
  } else if (o.config == "device") {
    c = configurations::get("gpu_only");
  } else if (o.config == "split") {
    c = configurations::get("cpu_gpu_data_parallel");
  } else {
    c = configurations::get("cpu_gpu_action_parallel");
  }
  for (auto& t : c.teams) {
    t.action = (o.config == "action-parallel" && t.type != DataType::tile) ? "diagnostics" : "hydro";
    t.initial_threads = o.threads;
  }
  for (auto& h : c.helpers) {
    h.threads = 1;
    if (h.kind == HelperKind::aggregator_mover || h.kind == HelperKind::aggregator) {
      h.packet_blocks = static_cast<std::size_t>(o.packet_blocks);
      if (o.config == "action-parallel") {
        h.variables = PacketVariables{};
        h.variables.copy_in = {0};
      } else {
        h.variables = hydro_vars;
      }
    }
  }
  c.name = "hydro-" + o.config;
  return c;
}


Simulation::Simulation(Options options) : options_(std::move(options)) {
  validate(options_);
  const Options& o = options_;
  boundary_ = o.boundary ? *o.boundary : (o.problem == Problem::wave ? Boundary::periodic : Boundary::outflow);
  GridSpec spec;
  spec.block_cells = {o.cells_per_block, o.cells_per_block, o.dim == 3 ? o.cells_per_block : 1};
  spec.blocks = {o.blocks, o.blocks, o.dim == 3 ? o.blocks : 1};
  spec.guard = guard_cells;
  spec.guard_dims = o.dim;  // a 2-D grid stores no z guard planes
  spec.n_vars = n_grid_vars;
  spec.domain_lo = {0.0, 0.0, 0.0};
  spec.domain_hi = {1.0, 1.0, o.dim == 3 ? 1.0 : 1.0 / (static_cast<double>(o.blocks) * o.cells_per_block)};
  spec.tile_cells = {o.tile, o.tile, o.dim == 3 ? o.tile : 0};
  grid_ = std::make_unique<Grid>(spec);
  configuration_ = make_configuration(o);
  // Two teams and two helper teams fit every hydro configuration (set_configuration may switch).
  RuntimeOptions ro;
  ro.n_teams = 2;
  ro.threads_per_team = o.threads;
  ro.n_helpers = 2;
  ro.helper_threads = 1;
  runtime_ = std::make_unique<Runtime>(ro);
  diagnostics_.assign(static_cast<std::size_t>(grid_->n_blocks()), BlockDiagnostics{});
  {
    // Kokkos 3.4: the first reduction of a size resizes Serial's shared buffer; run them once here.
    // Host lambdas: Serial runs on the host, and nvcc forbids extended lambdas in constructors.
    double s = 0;
    Kokkos::parallel_reduce("korch hydro warm-up", Kokkos::RangePolicy<Kokkos::Serial>(0, 1),
                            [](int, double& x) { x += 1; }, Kokkos::Sum<double>(s));
    Kokkos::parallel_reduce("korch hydro warm-up", Kokkos::RangePolicy<Kokkos::Serial>(0, 1),
                            [](int, double& x) { x = x < 1 ? x : 1; }, Kokkos::Min<double>(s));
  }
  initialize_state();
  fill_guards();
}

Simulation::~Simulation() = default;

void Simulation::set_configuration(const std::string& config) {
  Options o = options_;
  o.config = config;
  if (o.tile > 0 && config == "device") o.tile = 0;
  validate(o);
  if (o.tile != options_.tile) throw Error::format("set_configuration: --config {} needs whole-block tiles; build the Simulation with tile 0", config);
  configuration_ = make_configuration(o);
  options_ = o;
}

std::array<int, 3> Simulation::global_cells() const noexcept {
  const auto& s = grid_->spec();
  return {s.blocks[0] * s.block_cells[0], s.blocks[1] * s.block_cells[1], s.blocks[2] * s.block_cells[2]};
}

std::array<double, 3> Simulation::dx() const noexcept { return grid_->block(0).delta; }

EulerParams Simulation::euler_params(double dt) const {
  EulerParams p;
  p.gamma = options_.gamma;
  p.dt = dt;
  const auto d = dx();
  for (int i = 0; i < 3; ++i) p.dx[i] = d[static_cast<std::size_t>(i)];
  p.dim = options_.dim;
  p.limiter = options_.limiter;
  return p;
}

void Simulation::initialize_state() {
  const Options& o = options_;
  const double g = o.gamma;
  const auto d = dx();
  const auto n = global_cells();
  auto data = grid_->data();
  // Sedov: energy E0 = 1 (per unit length in 2D) in the cells whose centre is within r0 of the
  // domain centre (a cell corner, so the set is symmetric under every reflection of the quadrants).
  const double r0 = 3.5 * d[0];
  int deposit = 0;
  auto centre = [&](const BlockMeta& m, int a, int i) { return m.lo_coord[static_cast<std::size_t>(a)] + (i - m.interior.lo[static_cast<std::size_t>(a)] + 0.5) * d[static_cast<std::size_t>(a)]; };
  auto radius2 = [&](const BlockMeta& m, int i, int j, int k) {
    double r2 = 0;
    const double x[3] = {centre(m, 0, i) - 0.5, centre(m, 1, j) - 0.5, o.dim == 3 ? centre(m, 2, k) - 0.5 : 0.0};
    for (double v : x) r2 += v * v;
    return r2;
  };
  if (o.problem == Problem::sedov) {
    for (const auto& m : grid_->blocks())
      for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
        for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
          for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k) deposit += radius2(m, i, j, k) < r0 * r0;
  }
  const double cell_volume = d[0] * d[1] * (o.dim == 3 ? d[2] : 1.0);
  (void)n;
  for (const auto& m : grid_->blocks()) {
    for (int i = 0; i < static_cast<int>(data.extent(2)); ++i)
      for (int j = 0; j < static_cast<int>(data.extent(3)); ++j)
        for (int k = 0; k < static_cast<int>(data.extent(4)); ++k) {
          double rho = 1.0, u[3] = {0, 0, 0}, p = 1.0;
          const double x[3] = {centre(m, 0, i), centre(m, 1, j), centre(m, 2, k)};
          switch (o.problem) {
            case Problem::sedov:
              p = 1e-5;
              if (radius2(m, i, j, k) < r0 * r0) p = (g - 1.0) * 1.0 / (deposit * cell_volume);
              break;
            case Problem::sod_x:
            case Problem::sod_y:
            case Problem::sod_z: {
              const int a = o.problem == Problem::sod_x ? 0 : (o.problem == Problem::sod_y ? 1 : 2);
              if (x[a] >= 0.5) {
                rho = 0.125;
                p = 0.1;
              }
              break;
            }
            case Problem::wave: {
              const double vel[3] = {1.0, 0.5, 0.25};
              double phase = x[0] + x[1] + (o.dim == 3 ? x[2] : 0.0);
              rho = 1.0 + 0.2 * std::sin(2.0 * kPi * phase);
              for (int a = 0; a < o.dim; ++a) u[a] = vel[a];
              break;
            }
          }
          const double E = p / (g - 1.0) + 0.5 * rho * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
          const double U[5] = {rho, rho * u[0], rho * u[1], rho * u[2], E};
          for (int v = 0; v < n_cons; ++v) {
            data(m.id, v, i, j, k) = U[v];
            data(m.id, var_new + v, i, j, k) = U[v];
          }
        }
  }
}

void Simulation::fill_guards() {
  auto data = grid_->data();
  const auto& spec = grid_->spec();
  const int g = guard_cells;
  const int dim = options_.dim;
  const bool periodic = boundary_ == Boundary::periodic;
  const std::array<int, 3> nb = spec.block_cells, blocks = spec.blocks;
  const auto ext = grid_->stored_extent();
  const int nblocks = grid_->n_blocks();
  // Block ids: the grid numbers blocks with x fastest (checked on the metadata below).
  std::vector<int> id_of(static_cast<std::size_t>(nblocks));
  for (const auto& m : grid_->blocks())
    id_of[static_cast<std::size_t>(m.index[0] + blocks[0] * (m.index[1] + blocks[1] * m.index[2]))] = m.id;
  std::vector<std::array<int, 3>> index(static_cast<std::size_t>(nblocks));
  for (const auto& m : grid_->blocks()) index[static_cast<std::size_t>(m.id)] = m.index;
  const int* ids = id_of.data();
  const std::array<int, 3>* idx = index.data();
  on_host_space(options_.host_parallel, [&](auto space) {
  using Space = decltype(space);
  Kokkos::parallel_for(
      "korch hydro guard fill",
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<2>>({0, 0}, {nblocks, ext[0]}),
      [=](int b, int i) {
        for (int j = 0; j < ext[1]; ++j)
          for (int k = 0; k < ext[2]; ++k) {  // in 2-D the one z plane (no z guard cells)
            const int l[3] = {i, j, k};
            bool interior = true;
            for (int d = 0; d < dim; ++d) interior = interior && l[d] >= g && l[d] < g + nb[d];
            if (interior) continue;
            int src_block[3], src[3];
            for (int d = 0; d < 3; ++d) {
              if (d >= dim) {
                src_block[d] = 0;
                src[d] = l[d];
                continue;
              }
              const int N = nb[d] * blocks[d];
              int G = idx[b][d] * nb[d] + l[d] - g;
              if (periodic) G = ((G % N) + N) % N;
              else G = G < 0 ? 0 : (G >= N ? N - 1 : G);
              src_block[d] = G / nb[d];
              src[d] = G % nb[d] + g;
            }
            const int sb = ids[src_block[0] + blocks[0] * (src_block[1] + blocks[1] * src_block[2])];
            for (int v = 0; v < n_cons; ++v) data(b, v, i, j, k) = data(sb, v, src[0], src[1], src[2]);
          }
      });
  space.fence();
  });
}

void Simulation::commit_and_fill() {
  auto data = grid_->data();
  const Box in = grid_->block(0).interior;
  on_host_space(options_.host_parallel, [&](auto space) {
  using Space = decltype(space);
  Kokkos::parallel_for(
      "korch hydro commit",
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<3>>({0, 0, in.lo[0]},
                                                                                {grid_->n_blocks(), n_cons, in.hi[0]}),
      [=](int b, int v, int i) {
        for (int j = in.lo[1]; j < in.hi[1]; ++j)
          for (int k = in.lo[2]; k < in.hi[2]; ++k) data(b, v, i, j, k) = data(b, var_new + v, i, j, k);
      });
  space.fence();
  });
  fill_guards();
}

double Simulation::stable_dt() const {
  auto data = grid_->data();
  const Box in = grid_->block(0).interior;
  const EulerParams p = euler_params(0.0);
  double m = 0;
  on_host_space(options_.host_parallel, [&](auto space) {
  using Space = decltype(space);
  Kokkos::parallel_reduce(
      "korch hydro cfl",
      Kokkos::MDRangePolicy<Space, Kokkos::Rank<3>>({0, in.lo[0], in.lo[1]},
                                                                                {grid_->n_blocks(), in.hi[0], in.hi[1]}),
      [=](int b, int i, int j, double& lo) {
        for (int k = in.lo[2]; k < in.hi[2]; ++k) {
          double U[5];
          for (int v = 0; v < 5; ++v) U[v] = data(b, v, i, j, k);
          const double t = cell_dt(U, p);
          lo = t < lo ? t : lo;
        }
      },
      Kokkos::Min<double>(m));
  space.fence();
  });
  if (!(m > 0) || !std::isfinite(m))
    throw Error::format("hydro: time step {} at step {} (t = {}): the state is no longer physical", m, steps_, time_);
  return options_.cfl * m;
}

double Simulation::step(double dt_max) {
  auto t0 = Clock::now();
  double dt = std::min(stable_dt(), dt_max);
  phases_.dt += seconds_since(t0);
  StepParameters sp;
  sp.euler = euler_params(dt);
  sp.diagnostics = diagnostics_.data();
  const auto d = dx();
  sp.cell_volume = d[0] * d[1] * (options_.dim == 3 ? d[2] : 1.0);
  Bundle bundle("hydro-step", ActionParameters(sp));
  bundle.add(hydro_routine());
  if (options_.config == "action-parallel") bundle.add(diagnostics_routine());
  const bool tracing = options_.write_output;
  if (tracing) {
    trace_.clear();
    runtime_->set_trace(&trace_);
  }
  t0 = Clock::now();
  runtime_->execute(bundle, configuration_, *grid_);
  phases_.execute += seconds_since(t0);
  if (tracing) {
    runtime_->set_trace(nullptr);
    auto ev = trace_.events();
    for (const auto& e : ev) {
      action_seconds_[e.category + ":" + e.name] += 1e-9 * static_cast<double>(e.end_ns - e.begin_ns);
      if (e.category == "transfer") ++transfer_events_;
    }
    const auto o = korch::transfer_overlap(ev);
    overlap_.transfers += o.transfers;
    overlap_.transfer_ns += o.transfer_ns;
    overlap_.overlapped_ns += o.overlapped_ns;
    kept_.push_back(std::move(ev));
    while (static_cast<int>(kept_.size()) > options_.trace_cycles) kept_.pop_front();
  }
  // Bytes moved: every block sent to a device pipeline goes over with the copy-in variables and
  // comes back with the copy-out ones.
  for (const auto& [entry, items] : runtime_->last_distribution()) {
    for (const auto& h : configuration_.helpers) {
      if (h.name != entry) continue;
      const auto e = grid_->stored_extent();
      const double cells = static_cast<double>(e[0]) * e[1] * e[2];
      transfer_bytes_ += static_cast<double>(items) * cells * 8.0 *
                         static_cast<double>(h.variables.copy_in.size() + 2 * h.variables.copy_in_out.size() +
                                             h.variables.copy_out.size());
    }
  }
  t0 = Clock::now();
  commit_and_fill();
  phases_.commit += seconds_since(t0);
  if (options_.conduction > 0) {
    t0 = Clock::now();
    conduct_step(dt);
    phases_.conduction += seconds_since(t0);
  }
  time_ += dt;
  ++steps_;
  return dt;
}

void Simulation::conduct_step(double dt) {
#if defined(KORCH_HYDRO_HAVE_CONDUCTION)
  const double g = options_.gamma;
  std::vector<double> rho = gather(0), mx = gather(1), my = gather(2), mz = gather(3), E = gather(4);
  std::vector<double> T(rho.size());
  for (std::size_t c = 0; c < rho.size(); ++c) {
    const double kin = 0.5 * (mx[c] * mx[c] + my[c] * my[c] + mz[c] * mz[c]) / rho[c];
    T[c] = (g - 1.0) * (E[c] - kin) / rho[c];  // p / rho
  }
  const auto n = global_cells();
  const auto d = dx();
  conduct(T, n, {d[0], d[1], options_.dim == 3 ? d[2] : 1.0}, options_.conduction, dt, boundary_ == Boundary::periodic);
  auto data = grid_->data();
  for_each_interior_cell(*grid_, [&](int b, int i, int j, int k, std::size_t c) {
    const double r = data(b, 0, i, j, k);
    const double kin = 0.5 * (data(b, 1, i, j, k) * data(b, 1, i, j, k) + data(b, 2, i, j, k) * data(b, 2, i, j, k) +
                              data(b, 3, i, j, k) * data(b, 3, i, j, k)) / r;
    data(b, 4, i, j, k) = r * T[c] / (g - 1.0) + kin;
  });
  fill_guards();
#else
  (void)dt;
  throw Error("option --conduction: this build has no conduction solver (apps/hydro/lib/conduction.hpp missing)");
#endif
}

std::vector<double> Simulation::gather(int var) const {
  const auto n = global_cells();
  std::vector<double> out(static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) * static_cast<std::size_t>(n[2]));
  auto data = grid_->data();
  for_each_interior_cell(*grid_, [&](int b, int i, int j, int k, std::size_t c) { out[c] = data(b, var, i, j, k); });
  return out;
}

std::array<double, 5> Simulation::totals() const {
  std::array<double, 5> t{0, 0, 0, 0, 0};
  auto data = grid_->data();
  const auto d = dx();
  const double vol = d[0] * d[1] * (options_.dim == 3 ? d[2] : 1.0);
  for (const auto& m : grid_->blocks())
    for (int v = 0; v < 5; ++v)
      for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
        for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
          for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k) t[static_cast<std::size_t>(v)] += data(m.id, v, i, j, k) * vol;
  return t;
}

void Simulation::run() {
  const Options& o = options_;
  // A directory that cannot be written should fail the run now, not after its last step.
  if (o.write_output) prepare_output_directory(o.out);
  const double tmax = o.steps > 0 ? 0.0 : (o.tmax > 0 ? o.tmax : default_tmax(o.problem));
  const auto n = global_cells();
  const double cells = static_cast<double>(n[0]) * n[1] * n[2];
  const auto start = Clock::now();
  Progress progress(stdout, Progress::mode_for(o.quiet, stdout), cells);
  auto done = [&] { return o.steps > 0 ? steps_ >= o.steps : time_ >= tmax * (1.0 - 1e-12); };
  while (!done()) {
    const double dt = step(o.steps > 0 ? 1e300 : tmax - time_);
    const double fraction = done() ? 1.0 : (o.steps > 0 ? static_cast<double>(steps_) / o.steps : time_ / tmax);
    progress.update(fraction, steps_, time_, dt, seconds_since(start));
  }
  run_seconds_ = seconds_since(start);
}

std::vector<TraceEvent> Simulation::last_events() const {
  std::vector<TraceEvent> all;
  for (const auto& c : kept_) all.insert(all.end(), c.begin(), c.end());
  return all;
}

std::string Simulation::summary() const {
  const auto n = global_cells();
  const double cells = static_cast<double>(n[0]) * n[1] * n[2];
  std::string s;
  s += fmt::format("korch-hydro: {} {}D, {} cells ({}^{} blocks of {}^{}), configuration {} ({} threads/team), {} steps to t = {:.4e}\n",
                   to_string(options_.problem), options_.dim, static_cast<long long>(cells), options_.blocks, options_.dim,
                   options_.cells_per_block, options_.dim, options_.config, options_.threads, steps_, time_);
  const double total = run_seconds_ > 0 ? run_seconds_ : (phases_.execute + phases_.commit + phases_.dt + phases_.conduction);
  s += fmt::format("  {:<34} {:>14}\n", "metric", "value");
  s += fmt::format("  {:<34} {:>14.4e}\n", "cell updates / s", steps_ > 0 && total > 0 ? cells * steps_ / total : 0.0);
  s += fmt::format("  {:<34} {:>14.4e}\n", "time per step [s]", steps_ > 0 ? total / steps_ : 0.0);
  auto share = [&](const char* name, double t) {
    s += fmt::format("  {:<34} {:>13.1f}%\n", name, total > 0 ? 100.0 * t / total : 0.0);
  };
  share("share: runtime execute (bundle)", phases_.execute);
  share("share: commit + guard fill", phases_.commit);
  share("share: CFL reduction", phases_.dt);
  if (options_.conduction > 0) share("share: conduction (CG)", phases_.conduction);
  double task_total = 0;
  for (const auto& [k, v] : action_seconds_) task_total += v;
  for (const auto& [k, v] : action_seconds_)
    s += fmt::format("  {:<34} {:>13.1f}%  ({:.3e} s summed over threads)\n", "  of traced work: " + k,
                     task_total > 0 ? 100.0 * v / task_total : 0.0, v);
  s += fmt::format("  {:<34} {:>14}\n", "transfer events", transfer_events_);
  s += fmt::format("  {:<34} {:>14.4e}\n", "bytes moved host<->device", transfer_bytes_);
  if (overlap_.transfers > 0) {
    s += fmt::format("  {:<34} {:>13.1f}%  (of {:.3e} s of transfers)\n", "transfer time overlapped by tasks",
                     100.0 * overlap_.fraction(), 1e-9 * static_cast<double>(overlap_.transfer_ns));
  }
  if (options_.config == "action-parallel") {
    double mass = 0, lo = 1e300, hi = -1e300;
    for (const auto& d : diagnostics_) {
      mass += d.mass;
      lo = std::min(lo, d.rho_min);
      hi = std::max(hi, d.rho_max);
    }
    s += fmt::format("  {:<34} {:>14.8e}\n", "diagnostics: mass (last cycle)", mass);
    s += fmt::format("  {:<34} {:>14.4e}\n", "diagnostics: min density", lo);
    s += fmt::format("  {:<34} {:>14.4e}\n", "diagnostics: max density", hi);
  }
  return s;
}

}  // namespace korch::hydro
