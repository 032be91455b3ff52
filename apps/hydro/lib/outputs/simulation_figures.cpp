// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a run reports, on every rank count the same: the whole field of a variable, the conserved
// totals, the state hash and the summary table (collective operations over the ranks).
#include "simulation.hpp"

#include "host_cells.hpp"
#include "hydro_operation.hpp"
#include "runtime_configuration.hpp"

#include <korch/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace korch::hydro {

std::vector<double> Simulation::gather(int var) const {
  if (var < 0 || var >= n_cons)
    throw Error::format("hydro: gather({}): conserved variables are 0..{}", var, n_cons - 1);
  return gather_set(state_, var);
}

std::vector<double> Simulation::gather_set(int set, int var) const {
  const auto n = global_cells();
  std::vector<double> out(static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) *
                          static_cast<std::size_t>(n[2]));
  const auto data = grid_->read_data();
  const int v = set + var;
  if (comm_.size() == 1) {
    for_each_interior_cell(*grid_, [&](int b, int i, int j, int k, std::size_t c) { out[c] = data(b, v, i, j, k); });
    return out;
  }
  // This rank's cells in its block order; then every rank's, placed by the decomposition.
  std::vector<double> mine;
  for (const auto& m : grid_->blocks())
    for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k)
      for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
        for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i) mine.push_back(data(m.id, v, i, j, k));
  const std::vector<double> all = comm_.all_gather(mine);
  const auto& nb = grid_->spec().block_cells;
  const Box in = grid_->block(0).interior;
  std::size_t next = 0;
  for (int r = 0; r < comm_.size(); ++r)
    for (const int g : decomposition_->blocks_of(r)) {
      const auto idx = decomposition_->index_of(g);
      for (int k = 0; k < in.extent(2); ++k)
        for (int j = 0; j < in.extent(1); ++j)
          for (int i = 0; i < in.extent(0); ++i) {
            const std::size_t I = static_cast<std::size_t>(idx[0] * nb[0] + i),
                              J = static_cast<std::size_t>(idx[1] * nb[1] + j),
                              K = static_cast<std::size_t>(idx[2] * nb[2] + k);
            out[I + static_cast<std::size_t>(n[0]) * (J + static_cast<std::size_t>(n[1]) * K)] = all[next++];
          }
    }
  return out;
}

std::array<double, 5> Simulation::totals() const {
  const auto data = grid_->read_data();
  const auto d = dx();
  const double vol = d[0] * d[1] * (options_.dim == 3 ? d[2] : 1.0);
  // Five sums per block of this rank (in global id order, as the grid stores them), then every
  // rank's blocks summed in global id order: the same additions whatever the number of ranks.
  std::vector<double> mine;
  for (const auto& m : grid_->blocks())
    for (int v = 0; v < n_cons; ++v) {
      double t = 0;
      for (int i = m.interior.lo[0]; i < m.interior.hi[0]; ++i)
        for (int j = m.interior.lo[1]; j < m.interior.hi[1]; ++j)
          for (int k = m.interior.lo[2]; k < m.interior.hi[2]; ++k) t += data(m.id, state_ + v, i, j, k) * vol;
      mine.push_back(t);
    }
  const std::vector<double> all = comm_.all_gather(mine);
  std::vector<const double*> of_block(static_cast<std::size_t>(decomposition_->n_blocks()));
  std::size_t next = 0;
  for (int r = 0; r < comm_.size(); ++r)
    for (const int g : decomposition_->blocks_of(r)) {
      of_block[static_cast<std::size_t>(g)] = all.data() + next;
      next += n_cons;
    }
  std::array<double, 5> t{0, 0, 0, 0, 0};
  for (const double* b : of_block)
    for (int v = 0; v < n_cons; ++v) t[static_cast<std::size_t>(v)] += b[v];
  return t;
}

namespace {

// splitmix64's finalizer: a bijection of 64-bit words in which every input bit reaches every
// output bit.
std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

}  // namespace

// A sum over every interior cell and variable, modulo 2^64, of a mix of the value's bits with its
// place in the whole grid: the same whatever the ranks, the blocks' size and the order of the sum,
// and a change to any one value always changes it (mix64 is a bijection).
std::uint64_t Simulation::state_hash() const {
  const auto data = grid_->read_data();
  std::uint64_t mine = 0;
  for_each_interior_cell(*grid_, [&](int b, int i, int j, int k, std::size_t c) {
    for (int v = 0; v < n_cons; ++v) {
      const double x = data(b, state_ + v, i, j, k);
      std::uint64_t bits = 0;
      std::memcpy(&bits, &x, sizeof bits);
      const std::uint64_t place = static_cast<std::uint64_t>(c) * n_cons + static_cast<std::uint64_t>(v);
      mine += mix64(bits ^ mix64(place + 0x9e3779b97f4a7c15ull));
    }
  });
  std::uint64_t h = 0;
  for (const std::uint64_t rank_sum : comm_.all_gather(std::vector<std::uint64_t>{mine})) h += rank_sum;
  return h;
}

// The summary's lines on transfers: events, bytes by kind, and how much of them tasks overlapped.
std::string Simulation::transfer_summary() const {
  std::string s;
  // Where a group shares the blocks out (split), what each pipeline got in the last step.
  const auto& shares = runtime_->last_distribution();
  if (shares.size() > 1) {
    std::string parts;
    for (const auto& [pipeline, items] : shares)
      parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", pipeline, items);
    s += fmt::format("  {:<34} {:>14}  (items per pipeline, the last step)\n", "distribution", parts);
  }
  if (options_.config != HydroConfiguration::cpu && options_.operation.empty())
    s += fmt::format("  {:<34} {:>14}\n", "blocks per device packet", device_packet_blocks(options_, comm_.size()));
  s += fmt::format("  {:<34} {:>14}\n", "transfer events", transfer_events_);
  // Outputs read since the last step (the final ones) count too.
  const auto pending = static_cast<double>(grid_->residency_transfers().total() - grid_moved_.total());
  const int steps = std::max(steps_ - first_step_, 1);
  const auto bytes = [&](const char* name, double value, const char* note) {
    s += fmt::format("  {:<34} {:>14.4e}  ({:.4e} per step){}\n", name, value, value / steps, note);
  };
  bytes("bytes moved host<->device", transfer_bytes_ + pending, "");
  bytes("  of them blocks' state", state_bytes_,
        grid_->residency() ? "  (blocks kept on the device between steps)" : "");
  bytes("  of them guard cells and halos", halo_bytes_, "");
  bytes("  of them outputs", output_bytes_ + pending, "");
  if (grid_->residency()) {
    const auto grid_bytes = static_cast<double>(grid_->n_blocks()) * grid_->doubles_per_block() * sizeof(double);
    s += fmt::format("  {:<34} {:>14.4e}  (of {:.4e}; {} of {} steps ended with none)\n",
                     "host copy kept after the last step", static_cast<double>(host_copy_kept_), grid_bytes,
                     steps_without_host_copy_, steps_ - first_step_);
  }
  if (comm_overlap_.transfers > 0) {
    s += fmt::format("  {:<34} {:>13.1f}%  (of {:.3e} s of messages in flight, rank 0)\n",
                     "communication overlapped by tasks", 100.0 * comm_overlap_.fraction(),
                     1e-9 * static_cast<double>(comm_overlap_.transfer_ns));
  }
  if (overlap_.transfers > 0) {
    s += fmt::format("  {:<34} {:>13.1f}%  (of {:.3e} s of transfers)\n", "transfer time overlapped by tasks",
                     100.0 * overlap_.fraction(), 1e-9 * static_cast<double>(overlap_.transfer_ns));
  }
  return s;
}

std::string Simulation::summary() const {
  const auto n = global_cells();
  const double cells = static_cast<double>(n[0]) * n[1] * n[2];
  std::string s;
  s += fmt::format(
      "korch-hydro: {} {}D, {} cells ({}^{} blocks of {}^{}), configuration {} ({} threads/team), {} steps to t = "
      "{:.4e}\n",
      to_string(options_.problem), options_.dim, static_cast<long long>(cells), options_.blocks, options_.dim,
      options_.cells_per_block, options_.dim, configuration_label(), options_.threads, steps_, time_);
  if (comm_.size() > 1) {
    const auto c = exchange_->counts();
    s += fmt::format(
        "  ranks: {} (rank 0: {} blocks, {} neighbour ranks, {} guard cells per variable received per step)\n",
        comm_.size(), grid_->n_blocks(), c.neighbour_ranks, c.cells_sent);
  }
  // The rate of whole steps (guard fill, halos, time step): the steps after the first where there
  // are such, as the first also fills pools, makes copy lists and brings the state to a device.
  const int steps = steps_ - first_step_;
  const double stepping = first_step_seconds_ + later_steps_seconds_;
  const bool later = steps > 1 && later_steps_seconds_ > 0;
  const double timed = later ? later_steps_seconds_ : stepping > 0 ? stepping : run_seconds_;
  const int timed_steps = later ? steps - 1 : steps;
  s += fmt::format("  {:<34} {:>14}\n", "metric", "value");
  s += fmt::format("  {:<34} {:>14.4e}{}\n", "cell updates / s",
                   timed_steps > 0 && timed > 0 ? cells * timed_steps / timed : 0.0,
                   later ? "  (whole steps after the first)" : "");
  s += fmt::format("  {:<34} {:>14.4e}\n", "time per step [s]", timed_steps > 0 ? timed / timed_steps : 0.0);
  if (later) s += fmt::format("  {:<34} {:>14.4e}\n", "first step [s]", first_step_seconds_);
  if (stepping > 0)
    s += fmt::format("  {:<34} {:>14.4e}  (the run outside its steps: pictures, plot files, checkpoints)\n",
                     "outputs [s]", std::max(run_seconds_ - stepping, 0.0));
  // Shares of every step's time, the first included.
  const double total = stepping > 0 ? stepping : run_seconds_;
  auto share = [&](const char* name, double t) {
    s += fmt::format("  {:<34} {:>13.1f}%\n", name, total > 0 ? 100.0 * t / total : 0.0);
  };
  share("share: runtime execute (fill + bundle)", phases_.execute);
  share("share: dt (combine, allreduce)", phases_.dt);
  if (options_.conduction > 0) share("share: conduction (CG)", phases_.conduction);
  double task_total = 0;
  for (const auto& [k, v] : action_seconds_) task_total += v;
  for (const auto& [k, v] : action_seconds_)
    s += fmt::format("  {:<34} {:>13.1f}%  ({:.3e} s summed over threads)\n", "  of traced work: " + k,
                     task_total > 0 ? 100.0 * v / task_total : 0.0, v);
  s += transfer_summary();
  // The steps computed them: on the action-parallel configuration, or in a plan with the action.
  if (options_.config == HydroConfiguration::action_parallel || (operation_ && operation_->has_action("diagnostics"))) {
    // Every rank's blocks, summed in global block order.
    std::vector<double> mine;
    for (const auto& m : grid_->blocks()) {
      const auto& d = diagnostics_[static_cast<std::size_t>(m.id)];
      mine.insert(mine.end(), {static_cast<double>(m.global_id), d.mass, d.rho_min, d.rho_max});
    }
    const auto all = comm_.all_gather(mine);
    std::vector<BlockDiagnostics> by_block(static_cast<std::size_t>(decomposition_->n_blocks()));
    for (std::size_t p = 0; p + 3 < all.size(); p += 4)
      by_block[static_cast<std::size_t>(all[p])] = BlockDiagnostics{all[p + 1], all[p + 2], all[p + 3]};
    double mass = 0, lo = 1e300, hi = -1e300;
    for (const auto& d : by_block) {
      mass += d.mass;
      lo = std::min(lo, d.rho_min);
      hi = std::max(hi, d.rho_max);
    }
    s += fmt::format("  {:<34} {:>14.8e}\n", "diagnostics: mass (last cycle)", mass);
    s += fmt::format("  {:<34} {:>14.4e}\n", "diagnostics: min density", lo);
    s += fmt::format("  {:<34} {:>14.4e}\n", "diagnostics: max density", hi);
  }
  const auto t = totals();
  s += fmt::format("  totals (mass, momentum x y z, energy): {:.17g} {:.17g} {:.17g} {:.17g} {:.17g}\n", t[0], t[1],
                   t[2], t[3], t[4]);
  // Exact conservation needs periodic boundaries (outflow lets mass and energy leave).
  auto change = [&](std::size_t v) { return std::abs(t[v] - initial_totals_[v]) / std::abs(initial_totals_[v]); };
  s += fmt::format("  relative change since step 0: mass {:.3e}, energy {:.3e}{}\n", change(0), change(4),
                   boundary_ == Boundary::periodic ? "" : " (outflow boundaries)");
  s += fmt::format("  state hash: {:016x}\n", state_hash());
  return s;
}

}  // namespace korch::hydro
