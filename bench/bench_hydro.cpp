// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Hydro main job: cell updates per second of the hydro step on every runtime
// configuration against a plain Kokkos implementation of the same step without the runtime (the
// same per-block kernel, hydro_update_block, called from ONE Kokkos parallel_for over the blocks on
// the default host space), and the bandwidth the step achieves against a STREAM triad measured in
// the same run. Ratios are printed, nothing is asserted.
//
//   OMP_NUM_THREADS=2 korch-bench-hydro [threads=2] [cells_per_block=64] [blocks=4] [steps=10] [dim=2]
//                                       [--variants cpu,device,...]
//
// "update" times the bundle (Runtime::execute) against the plain parallel loop; "step" adds the
// work between cycles that both share (commit of the new state + guard fill + CFL reduction).
// On the openmp build the plain loop runs on OpenMP with OMP_NUM_THREADS threads: give it the
// same number as `threads` (the runtime's team threads) for a fair ratio. The device and split
// configurations on a host-only build move packets between two host allocations (copy costs).
#include "bench_command_lines.hpp"
#include "plain_resident_step.hpp"
#include "simulation.hpp"
#include "bench_timing.hpp"

#include <korch/backend/passive_openmp.hpp>
#include <korch/backend/kokkos_compat.hpp>
#include <korch/cli/program.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using korch::bench::Clock;
using korch::bench::median;
double since(Clock::time_point t) { return korch::bench::seconds_since(t); }

struct Result {
  double update = 0, step = 0;  // median seconds per step
};

korch::hydro::Options options(const std::string& config, unsigned threads, int cells, int blocks, int dim) {
  korch::hydro::Options o;
  o.config = korch::hydro::parse_configuration(config);
  o.threads = threads;
  o.cells_per_block = cells;
  o.blocks = blocks;
  o.dim = dim;
  o.quiet = true;
  o.write_output = false;
  o.boundary = korch::hydro::Boundary::periodic;
  return o;
}

// One step of the plain implementation on `sim`'s grid: returns {update, step} seconds.
Result plain_step(korch::hydro::Simulation& sim) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  const auto t0 = Clock::now();
  sim.fill_guards();
  const double dt = sim.stable_dt();
  const auto p = sim.euler_params(dt);
  const korch::Grid& grid = sim.grid();
  const auto t1 = Clock::now();
  Kokkos::parallel_for("plain hydro update", Kokkos::RangePolicy<Host>(0, grid.n_blocks()),
                       [&](int b) { korch::hydro::hydro_update_block(grid, b, p); });
  Host().fence();
  const double u = since(t1);
  sim.swap_state();
  return {u, since(t0)};
}

// One step with the device kernel and no runtime (see korch::hydro::PlainDeviceStep).
Result plain_device_step(korch::hydro::Simulation& sim, korch::hydro::PlainDeviceStep& device, bool copies) {
  const auto t0 = Clock::now();
  sim.fill_guards();
  const auto p = sim.euler_params(sim.stable_dt());
  const auto t1 = Clock::now();
  device(p, copies);
  const double u = since(t1);
  sim.swap_state();
  return {u, since(t0)};
}

// One step of the plain resident step (korch::hydro::PlainResidentStep) on its own copy of the
// state: update = fluxes and update; step = guard fill, time step and update, all on the device.
Result plain_resident_step(const korch::hydro::Simulation& sim, korch::hydro::PlainResidentStep& resident) {
  const auto t0 = Clock::now();
  resident.fill_guards();
  const double dt = sim.options().cfl * resident.stable_dt(sim.euler_params(0.0));
  const auto t1 = Clock::now();
  resident.update(sim.euler_params(dt));
  const double u = since(t1);
  return {u, since(t0)};
}

Result runtime_step(korch::hydro::Simulation& sim) {
  const double e0 = sim.phase_times().execute;
  const auto t0 = Clock::now();
  sim.step();
  return {sim.phase_times().execute - e0, since(t0)};
}

// STREAM triad a = b + 3 c on `Space` with arrays in `Memory`: bytes moved (3 doubles per index,
// no write-allocate counted, as STREAM reports) per second, median of `reps` timed kernels.
template <class Space, class Memory>
struct Triad {
  Kokkos::View<double*, Memory> a, b, c;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const { a(i) = b(i) + 3.0 * c(i); }
};
template <class Space, class Memory>
struct TriadInit {
  Kokkos::View<double*, Memory> b, c;
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const {
    b(i) = 1.0;
    c(i) = 2.0;
  }
};

template <class Space, class Memory>
double stream_triad(std::size_t n, int reps) {
  Kokkos::View<double*, Memory> a("a", n), b("b", n), c("c", n);
  Kokkos::parallel_for("init", Kokkos::RangePolicy<Space>(0, n), TriadInit<Space, Memory>{b, c});
  Space().fence();
  std::vector<double> t;
  for (int r = 0; r < reps + 1; ++r) {
    const auto t0 = Clock::now();
    Kokkos::parallel_for("triad", Kokkos::RangePolicy<Space>(0, n), Triad<Space, Memory>{a, b, c});
    Space().fence();
    if (r > 0) t.push_back(since(t0));  // the first launch pays for module loading
  }
  return 3.0 * 8.0 * static_cast<double>(n) / median(t);
}

using Args = korch::bench::HydroBenchArgs;
using Host = Kokkos::DefaultHostExecutionSpace;

// Bytes a cell update must move at least: read 5 old + write 5 new doubles.
constexpr double bytes_per_cell = 10.0 * 8.0;

// Per variant: the update and step seconds of each timed step.
struct VariantTimes {
  std::vector<std::vector<double>> upd, stp;
};

// The plain loop, then every configuration, then the plain resident step ("plain-resident": the
// whole grid in device memory, guard fill, fluxes per direction over all blocks, update and time
// step on the device, on its own copy of the state). On a GPU build two more references: the same
// device kernel without the runtime, with the whole grid copied to the device and back each step
// ("plain-device") and with the data kept on the device ("plain-dev-resident", kernels alone); and
// the device configuration with its fused kernel ("device-fused") and its staged kernels
// ("device-staged") beside its face-flux kernels ("device", the default; docs/benchmarks.md, "The
// device kernels").
// --variants keeps the chosen ones, plain-kokkos first when chosen (the ratios' reference).
std::vector<std::string> bench_variants(const std::vector<std::string>& chosen) {
  std::vector<std::string> variants;
  for (const std::string& name : korch::bench::hydro_bench_variant_names()) {
    const bool wanted = chosen.empty() || std::find(chosen.begin(), chosen.end(), name) != chosen.end();
    const bool unavailable = korch::bench::hydro_bench_variant_needs_gpu(name) && !korch::device_is_accelerator;
    if (!wanted || (unavailable && chosen.empty())) continue;
    if (unavailable)
      throw korch::cli::UsageError("--variants: '" + name +
                                   "' needs a GPU build (this one runs its device space on the host): leave it out");
    variants.push_back(name);
  }
  return variants;
}

// One Simulation (one Runtime), the variants interleaved step by step so that a loaded machine
// slows them alike.
VariantTimes time_variants(const Args& args, const std::vector<std::string>& variants) {
  VariantTimes times{std::vector<std::vector<double>>(variants.size()),
                     std::vector<std::vector<double>>(variants.size())};
  korch::hydro::Simulation sim(options("cpu", args.threads, args.cells, args.blocks, args.dim));
  korch::hydro::PlainDeviceStep plain_device(sim.grid());
  const korch::BoundaryKind edge = korch::BoundaryKind::periodic;  // options() above
  korch::hydro::PlainResidentStep plain_resident(sim.grid(), {edge, edge, edge});
  for (int rep = 0; rep < args.steps + 1; ++rep) {
    for (std::size_t v = 0; v < variants.size(); ++v) {
      Result r;
      if (variants[v] == "plain-kokkos") {
        r = plain_step(sim);
      } else if (variants[v] == "plain-resident") {
        r = plain_resident_step(sim, plain_resident);
      } else if (variants[v].rfind("plain-dev", 0) == 0) {
        r = plain_device_step(sim, plain_device, variants[v] == "plain-device");
      } else {
        using korch::hydro::DeviceKernel;
        const bool fused = variants[v] == "device-fused", staged = variants[v] == "device-staged";
        sim.set_configuration(korch::hydro::parse_configuration(fused || staged ? "device" : variants[v]));
        sim.set_device_kernel(fused ? DeviceKernel::fused : staged ? DeviceKernel::staged : DeviceKernel::faces);
        r = runtime_step(sim);
      }
      if (rep > 0) {  // the first round warms pools and caches
        times.upd[v].push_back(r.update);
        times.stp[v].push_back(r.step);
      }
    }
  }
  return times;
}

double fastest(const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }

// One row per variant: medians per variant, ratios to the plain loop, bandwidth against the triad.
void print_variant_table(const std::vector<std::string>& variants, const VariantTimes& times, long long n_cells,
                         double triad, double device_triad) {
  const auto& upd = times.upd;
  const auto& stp = times.stp;
  const Result plain{median(upd[0]), median(stp[0])};
  const double plain_min = fastest(upd[0]);
  std::printf("  ratio columns: %s's time / the variant's\n", variants[0].c_str());
  std::printf("  %-16s %28s %22s %22s %26s\n", "variant", "update: median (min) [ms]", "cells/s (median)",
              "plain/this med (min)", "step median [ms], ratio");
  for (std::size_t v = 0; v < variants.size(); ++v) {
    const Result r{median(upd[v]), median(stp[v])};
    const double rate = static_cast<double>(n_cells) / r.update;
    // Variants whose kernels run on the GPU are measured against the device's triad.
    const bool on_device =
        device_triad > 0.0 && (variants[v].rfind("device", 0) == 0 || variants[v] == "split" ||
                               (variants[v].rfind("plain-", 0) == 0 && variants[v] != "plain-kokkos"));
    const double limit = on_device ? device_triad : triad;
    std::printf(
        "  %-16s %15.3f (%8.3f) %22.4e %13.3f (%6.3f) %16.3f   %6.3f | bandwidth %6.2f GB/s = %5.1f%% of %s triad\n",
        variants[v].c_str(), 1e3 * r.update, 1e3 * fastest(upd[v]), rate, plain.update / r.update,
        plain_min / fastest(upd[v]), 1e3 * r.step, plain.step / r.step, 1e-9 * rate * bytes_per_cell,
        100.0 * rate * bytes_per_cell / limit, on_device ? "device" : "host");
  }
}

// The device configurations against the same device kernel without the runtime (GPU builds), for
// each reference among the variants: update against plain-device (copies the grid each step) and
// plain-dev-resident (kernels alone), whole step against plain-resident.
void print_device_ratios(const std::vector<std::string>& variants, const VariantTimes& times) {
  auto index = [&](const char* name) {
    return static_cast<std::size_t>(std::find(variants.begin(), variants.end(), name) - variants.begin());
  };
  struct Reference {
    const char* name;
    bool whole_step;
  };
  const Reference references[] = {{"plain-device", false}, {"plain-dev-resident", false}, {"plain-resident", true}};
  for (const char* name : {"device", "device-fused", "device-staged", "split"}) {
    if (index(name) == variants.size()) continue;
    std::printf("  device ratio %-12s:", name);
    for (const Reference& ref : references) {
      if (index(ref.name) == variants.size()) continue;
      const auto& of = ref.whole_step ? times.stp : times.upd;
      std::printf(" %s/this%s %.3f", ref.name, ref.whole_step ? " (whole step)" : "",
                  median(of[index(ref.name)]) / median(of[index(name)]));
    }
    std::printf("\n");
  }
}

int run(const Args& args) {
  const std::vector<std::string> variants = bench_variants(args.variants);  // a usage error before any output
  const int cells = args.cells;
  const int blocks = args.blocks;
  const int dim = args.dim;
  long long n_cells = 1;
  for (int d = 0; d < dim; ++d) n_cells *= static_cast<long long>(cells) * blocks;
  const char* wait = std::getenv("OMP_WAIT_POLICY");
  std::printf("OMP_WAIT_POLICY=%s\n", wait ? wait : "(unset)");
  std::printf(
      "korch-bench-hydro: Sedov %dD, %d^%d blocks of %d^%d cells (%lld cells), %u team threads; plain loop on %s "
      "with %d threads; median of %d interleaved steps\n",
      dim, blocks, dim, cells, dim, n_cells, args.threads, Host::name(), korch::compat::concurrency(Host()),
      args.steps);
  const double triad = stream_triad<Host, Kokkos::HostSpace>(std::size_t{1} << 24, 10);
  // On a GPU build the device's own triad (2^27 doubles = 1 GiB per array, far beyond its caches)
  // bounds the device configurations' step, whose data lives in device memory while it runs.
  const double device_triad =
      korch::device_is_accelerator
          ? stream_triad<Kokkos::DefaultExecutionSpace, Kokkos::DefaultExecutionSpace::memory_space>(
                std::size_t{1} << 27, 20)
          : 0.0;
  const VariantTimes times = time_variants(args, variants);
  std::printf("  STREAM triad %.2f GB/s (host, 2^24 doubles per array)\n", 1e-9 * triad);
  if (device_triad > 0.0) {
    std::printf(
        "  STREAM triad %.2f GB/s (%s, 2^27 doubles per array): at %.0f bytes per cell the hydro step can "
        "reach at most %.4e cells/s on the device\n",
        1e-9 * device_triad, Kokkos::DefaultExecutionSpace::name(), bytes_per_cell, device_triad / bytes_per_cell);
  }
  print_variant_table(variants, times, n_cells, triad, device_triad);
  if (korch::device_is_accelerator) print_device_ratios(variants, times);
  std::printf(
      "  (ratio plain/this >= 0.909 meets the <= 10%% runtime-overhead goal; update = Runtime::execute of the "
      "bundle vs the plain parallel loop)\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // KORCH_BENCH_HYDRO_ACTIVE_OMP=1 keeps libgomp's spinning workers, for comparison.
  korch::prefer_passive_openmp_wait(argv, "KORCH_BENCH_HYDRO_ACTIVE_OMP");
  Args args;
  const auto command_line = korch::bench::hydro_bench_command_line(args);
  korch::cli::Program& program = *command_line;
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(args);
  });
}
