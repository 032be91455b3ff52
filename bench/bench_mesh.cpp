// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// bench_mesh: time per airfoil iteration on a generated O-grid (default 400 x 250 = 100 000 cells).
// All variants run the same kernels (korch::mesh::airfoil) from the same initial state, in this process:
//   plain       hand-written sequential C++ loops over arrays (the baseline for executors on the host)
//   sequential  korch SequentialExecutor
//   hand-kokkos hand-written Kokkos parallel_for / parallel_reduce on DeviceExecSpace, INC by atomics
//   direct      korch DirectExecutor (colouring; and atomics)
//   message     korch MessageExecutor (the message protocol, docs/mesh.md), with messages per iteration
// Prints times and ratios; asserts nothing about time.
//   korch-bench-mesh [--ni N] [--nj N] [--iterations N] [--rounds N] [--md-iterations N] [--threads N]
#include "bench_command_lines.hpp"
#include <korch/mesh.hpp>
#include "airfoil.hpp"
#include <korch/cli/program.hpp>

#include <Kokkos_Core.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace mesh = korch::mesh;
namespace af = korch::mesh::airfoil;

namespace {

struct K {
  double v[af::n_constants];
};
K pack(const af::Constants& c) { return K{{c.gam, c.gm1, c.cfl, c.eps, c.qinf[0], c.qinf[1], c.qinf[2], c.qinf[3]}}; }

// ---- plain sequential loops ----
struct Plain {
  const af::MeshData& m;
  K k;
  std::vector<double> q, qold, res, adt;
  Plain(const af::MeshData& mesh, const af::Constants& c) : m(mesh), k(pack(c)) {
    q.resize(4 * static_cast<std::size_t>(m.ncell));
    for (int i = 0; i < m.ncell; ++i)
      for (int n = 0; n < 4; ++n) q[4 * static_cast<std::size_t>(i) + n] = c.qinf[static_cast<std::size_t>(n)];
    qold = q;
    res.assign(q.size(), 0.0);
    adt.assign(static_cast<std::size_t>(m.ncell), 0.0);
  }
  double iterate() {
    const double* x = m.x.data();
    for (int i = 0; i < m.ncell; ++i) af::SaveSoln{}(&q[4 * i], &qold[4 * i]);
    double rms = 0;
    for (int step = 0; step < 2; ++step) {
      for (int i = 0; i < m.ncell; ++i) {
        const int* c = &m.cell[4 * i];
        af::AdtCalc{}(x + 2 * c[0], x + 2 * c[1], x + 2 * c[2], x + 2 * c[3], &q[4 * i], &adt[i], k.v);
      }
      for (int e = 0; e < m.nedge; ++e) {
        const int a = m.edge[2 * e], b = m.edge[2 * e + 1], c1 = m.ecell[2 * e], c2 = m.ecell[2 * e + 1];
        af::ResCalc{}(x + 2 * a, x + 2 * b, &q[4 * c1], &q[4 * c2], &adt[c1], &adt[c2], &res[4 * c1], &res[4 * c2],
                      k.v);
      }
      for (int e = 0; e < m.nbedge; ++e) {
        const int a = m.bedge[2 * e], b = m.bedge[2 * e + 1], c = m.becell[e];
        af::BresCalc{}(x + 2 * a, x + 2 * b, &q[4 * c], &adt[c], &res[4 * c], &m.bound[e], k.v);
      }
      rms = 0;
      for (int i = 0; i < m.ncell; ++i) af::Update{}(&qold[4 * i], &q[4 * i], &res[4 * i], &adt[i], &rms);
    }
    return std::sqrt(rms / m.ncell);
  }
};

// ---- hand-written Kokkos ----
template <class T>
Kokkos::View<T*, korch::DeviceMemSpace> to_device(const std::vector<T>& v, const char* name) {
  Kokkos::View<T*, korch::DeviceMemSpace> d(std::string(name), v.size());
  Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(v.data(), v.size());
  Kokkos::deep_copy(d, h);
  return d;
}

struct HandKokkos {
  using Exec = korch::DeviceExecSpace;
  int ncell, nedge, nbedge;
  K k;
  Kokkos::View<double*, korch::DeviceMemSpace> x, q, qold, res, adt;
  Kokkos::View<int*, korch::DeviceMemSpace> cell, edge, ecell, bedge, becell, bound;
  HandKokkos(const af::MeshData& m, const af::Constants& c)
      : ncell(m.ncell), nedge(m.nedge), nbedge(m.nbedge), k(pack(c)) {
    x = to_device(m.x, "x");
    cell = to_device(m.cell, "cell");
    edge = to_device(m.edge, "edge");
    ecell = to_device(m.ecell, "ecell");
    bedge = to_device(m.bedge, "bedge");
    becell = to_device(m.becell, "becell");
    bound = to_device(m.bound, "bound");
    std::vector<double> q0(4 * static_cast<std::size_t>(ncell));
    for (int i = 0; i < ncell; ++i)
      for (int n = 0; n < 4; ++n) q0[4 * static_cast<std::size_t>(i) + n] = c.qinf[static_cast<std::size_t>(n)];
    q = to_device(q0, "q");
    qold = to_device(q0, "qold");
    res = Kokkos::View<double*, korch::DeviceMemSpace>("res", q0.size());
    adt = Kokkos::View<double*, korch::DeviceMemSpace>("adt", static_cast<std::size_t>(ncell));
  }
  double iterate() {
    auto x = this->x;
    auto q = this->q;
    auto qold = this->qold;
    auto res = this->res;
    auto adt = this->adt;
    auto cell = this->cell;
    auto edge = this->edge;
    auto ecell = this->ecell;
    auto bedge = this->bedge;
    auto becell = this->becell;
    auto bound = this->bound;
    const K k = this->k;
    using Range = Kokkos::RangePolicy<Exec>;
    Kokkos::parallel_for(
        "save_soln", Range(0, ncell), KOKKOS_LAMBDA(int i) { af::SaveSoln{}(&q(4 * i), &qold(4 * i)); });
    double rms = 0;
    for (int step = 0; step < 2; ++step) {
      Kokkos::parallel_for(
          "adt_calc", Range(0, ncell), KOKKOS_LAMBDA(int i) {
            af::AdtCalc{}(&x(2 * cell(4 * i)), &x(2 * cell(4 * i + 1)), &x(2 * cell(4 * i + 2)),
                          &x(2 * cell(4 * i + 3)), &q(4 * i), &adt(i), k.v);
          });
      Kokkos::parallel_for(
          "res_calc", Range(0, nedge), KOKKOS_LAMBDA(int e) {
            const int c1 = ecell(2 * e), c2 = ecell(2 * e + 1);
            double r1[4] = {0, 0, 0, 0}, r2[4] = {0, 0, 0, 0};
            af::ResCalc{}(&x(2 * edge(2 * e)), &x(2 * edge(2 * e + 1)), &q(4 * c1), &q(4 * c2), &adt(c1), &adt(c2), r1,
                          r2, k.v);
            for (int n = 0; n < 4; ++n) {
              Kokkos::atomic_add(&res(4 * c1 + n), r1[n]);
              Kokkos::atomic_add(&res(4 * c2 + n), r2[n]);
            }
          });
      Kokkos::parallel_for(
          "bres_calc", Range(0, nbedge), KOKKOS_LAMBDA(int e) {
            const int c = becell(e);
            double r[4] = {0, 0, 0, 0};
            af::BresCalc{}(&x(2 * bedge(2 * e)), &x(2 * bedge(2 * e + 1)), &q(4 * c), &adt(c), r, &bound(e), k.v);
            for (int n = 0; n < 4; ++n) Kokkos::atomic_add(&res(4 * c + n), r[n]);
          });
      rms = 0;
      Kokkos::parallel_reduce(
          "update", Range(0, ncell),
          KOKKOS_LAMBDA(int i, double& s) { af::Update{}(&qold(4 * i), &q(4 * i), &res(4 * i), &adt(i), &s); }, rms);
    }
    Kokkos::fence();
    return std::sqrt(rms / ncell);
  }
};

double seconds_per(const std::function<double()>& iterate, int n, double& last_rms) {
  last_rms = iterate();  // warm-up (plans, first-touch)
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) last_rms = iterate();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / n;
}

using Args = korch::bench::MeshBenchArgs;

int run(const Args& args) {
  {
    const int ni = args.ni, nj = args.nj, iterations = args.iterations, rounds = args.rounds,
              md_iterations = args.md_iterations;
    const unsigned threads = args.threads;
    const af::MeshData m = af::generate_ogrid(ni, nj);
    const af::Constants c = af::reference_constants();
    fmt::print("bench_mesh: airfoil on a generated O-grid {} x {}: {} cells, {} edges, {} nodes, {} boundary edges\n",
               ni, nj, m.ncell, m.nedge, m.nnode, m.nbedge);
    fmt::print(
        "backend {} (concurrency {}); best of {} rounds of {} iterations each ({} for message-driven), after a "
        "warm-up\n",
        korch::DeviceExecSpace::name(), korch::DeviceExecSpace().concurrency(), rounds, iterations, md_iterations);

    double rms_plain = 0, rms_seq = 0, rms_hand = 0, rms_col = 0, rms_atom = 0, rms_md = 0;
    Plain plain(m, c);
    af::Problem p_seq(m, c);
    mesh::SequentialExecutor seq;
    HandKokkos hand(m, c);
    af::Problem p_col(m, c);
    mesh::DirectExecutor colour(mesh::DirectOptions{mesh::IncMode::Colouring});
    af::Problem p_atom(m, c);
    mesh::DirectExecutor atom(mesh::DirectOptions{mesh::IncMode::Atomics});
    // Rounds interleave the variants; each variant's best round counts (the machine is shared).
    double t_plain = 1e30, t_seq = 1e30, t_hand = 1e30, t_col = 1e30, t_atom = 1e30;
    for (int round = 0; round < rounds; ++round) {
      t_plain = std::min(t_plain, seconds_per([&] { return plain.iterate(); }, iterations, rms_plain));
      t_seq = std::min(t_seq, seconds_per([&] { return p_seq.iterate(seq)[1]; }, iterations, rms_seq));
      t_hand = std::min(t_hand, seconds_per([&] { return hand.iterate(); }, iterations, rms_hand));
      t_col = std::min(t_col, seconds_per([&] { return p_col.iterate(colour)[1]; }, iterations, rms_col));
      t_atom = std::min(t_atom, seconds_per([&] { return p_atom.iterate(atom)[1]; }, iterations, rms_atom));
    }
    af::Problem p_md(m, c);
    mesh::MessageOptions mo;
    mo.threads = threads;
    mesh::MessageExecutor md(mo);
    p_md.iterate(md);  // warm-up: compiles the five invocations
    md.reset_counts();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < md_iterations; ++i) rms_md = p_md.iterate(md)[1];
    const double t_md = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / md_iterations;
    const auto& cnt = md.total_counts();
    const double msgs = static_cast<double>(cnt.delivered()) / md_iterations;

    auto row = [](const char* name, double t, double rms) {
      fmt::print("  {:<34} {:>10.3f} ms/iter   rms {:.6e}\n", name, 1e3 * t, rms);
    };
    fmt::print("times per iteration:\n");
    row("plain sequential loops", t_plain, rms_plain);
    row("korch sequential executor", t_seq, rms_seq);
    row("hand-written Kokkos (atomics)", t_hand, rms_hand);
    row("korch direct executor (colouring)", t_col, rms_col);
    row("korch direct executor (atomics)", t_atom, rms_atom);
    row(fmt::format("korch message-driven ({} threads)", threads).c_str(), t_md, rms_md);
    fmt::print("ratios (same run):\n");
    fmt::print("  plain sequential / direct (colouring)      = {:.2f}x  (speed-up of the direct executor)\n",
               t_plain / t_col);
    fmt::print("  plain sequential / direct (atomics)        = {:.2f}x\n", t_plain / t_atom);
    fmt::print("  sequential executor / plain sequential     = {:.2f}x  (framework overhead on one thread)\n",
               t_seq / t_plain);
    fmt::print("  direct (colouring) / hand-written Kokkos   = {:.2f}x  (goal <= 1.2)\n", t_col / t_hand);
    fmt::print("  direct (atomics) / hand-written Kokkos     = {:.2f}x  (goal <= 1.2)\n", t_atom / t_hand);
    fmt::print("  message-driven / direct (colouring)        = {:.1f}x\n", t_md / t_col);
    fmt::print(
        "message-driven: {:.0f} messages per iteration ({:.1f} per cell): begin {}, read_recv {}, write_recv {}, "
        "end {} (read_send {}, write_send {}); {:.0f} ns per message\n",
        msgs, msgs / m.ncell, cnt.begin / md_iterations, cnt.read_recv / md_iterations, cnt.write_recv / md_iterations,
        cnt.end / md_iterations, cnt.read_send / md_iterations, cnt.write_send / md_iterations, 1e9 * t_md / msgs);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  const auto command_line = korch::bench::mesh_bench_command_line(args);
  korch::cli::Program& program = *command_line;
  if (auto rc = program.parse(argc, argv)) return *rc;
  return program.run([&] {
    Kokkos::ScopeGuard kokkos(program.kokkos_argc(), program.kokkos_argv());
    return run(args);
  });
}
