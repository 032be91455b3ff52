// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The airfoil benchmark (OP2's classic 2D Euler finite-volume code) on korch mesh loops: the mesh
// format of shared/data/airfoil-162 (airfoil_files.hpp), its five kernels written from that README's formulas, a
// Problem that declares the sets, maps, dats and loops, and a generator of larger O-grid meshes.
//
//   auto mesh = airfoil::read_mesh(dir + "/mesh.dat");
//   airfoil::Problem problem(mesh, airfoil::read_constants(dir + "/constants.txt"));
//   mesh::DirectExecutor exec;
//   for (int it = 1; it <= 4; ++it) auto rms = problem.iterate(exec);   // {rms of k=0, rms of k=1}
#pragma once

#include "airfoil_files.hpp"

#include <korch/mesh/dat.hpp>
#include <korch/mesh/executor.hpp>
#include <korch/mesh/global.hpp>
#include <korch/mesh/map.hpp>
#include <korch/mesh/par_loop.hpp>
#include <korch/mesh/set.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace korch::mesh::airfoil {

// A structured O-grid around a NACA0012 profile (chord 1) with a circular far field, ni cells
// around and nj cells outwards (ni * nj cells), oriented like the reference mesh: cells counter-
// clockwise, edge normal (dy, -dx) from c1 to c2, boundary normals outward. ni >= 8, nj >= 2.
MeshData generate_ogrid(int ni, int nj, double far_radius = 10.0);

// Indices into the constant global `k` the kernels receive.
enum ConstantIndex { K_GAM = 0, K_GM1, K_CFL, K_EPS, K_QINF };
inline constexpr int n_constants = 8;

// ---- the five kernels (README formulas; stateless, arguments only) ----
struct SaveSoln {
  KOKKOS_INLINE_FUNCTION void operator()(const double* q, double* qold) const {
    for (int n = 0; n < 4; ++n) qold[n] = q[n];
  }
};

struct AdtCalc {
  KOKKOS_INLINE_FUNCTION void operator()(const double* x1, const double* x2, const double* x3, const double* x4,
                                         const double* q, double* adt, const double* k) const {
    const double gam = k[K_GAM], gm1 = k[K_GM1], cfl = k[K_CFL];
    const double ri = 1.0 / q[0];
    const double u = ri * q[1];
    const double v = ri * q[2];
    const double c = std::sqrt(gam * gm1 * (ri * q[3] - 0.5 * (u * u + v * v)));
    double dx = x2[0] - x1[0], dy = x2[1] - x1[1];
    double a = std::fabs(u * dy - v * dx) + c * std::sqrt(dx * dx + dy * dy);
    dx = x3[0] - x2[0];
    dy = x3[1] - x2[1];
    a += std::fabs(u * dy - v * dx) + c * std::sqrt(dx * dx + dy * dy);
    dx = x4[0] - x3[0];
    dy = x4[1] - x3[1];
    a += std::fabs(u * dy - v * dx) + c * std::sqrt(dx * dx + dy * dy);
    dx = x1[0] - x4[0];
    dy = x1[1] - x4[1];
    a += std::fabs(u * dy - v * dx) + c * std::sqrt(dx * dx + dy * dy);
    *adt = a / cfl;
  }
};

namespace detail {
KOKKOS_INLINE_FUNCTION double pressure(const double* q, double gm1) {
  const double ri = 1.0 / q[0];
  return gm1 * (q[3] - 0.5 * ri * (q[1] * q[1] + q[2] * q[2]));
}
// The flux f between two states through the side (dx, dy) (README, res_calc).
KOKKOS_INLINE_FUNCTION void flux(const double* q1, const double* q2, double dx, double dy, double mu, double gm1,
                                 double* f) {
  const double p1 = pressure(q1, gm1), p2 = pressure(q2, gm1);
  const double vol1 = (1.0 / q1[0]) * (q1[1] * dy - q1[2] * dx);
  const double vol2 = (1.0 / q2[0]) * (q2[1] * dy - q2[2] * dx);
  f[0] = 0.5 * (vol1 * q1[0] + vol2 * q2[0]) + mu * (q1[0] - q2[0]);
  f[1] = 0.5 * (vol1 * q1[1] + p1 * dy + vol2 * q2[1] + p2 * dy) + mu * (q1[1] - q2[1]);
  f[2] = 0.5 * (vol1 * q1[2] - p1 * dx + vol2 * q2[2] - p2 * dx) + mu * (q1[2] - q2[2]);
  f[3] = 0.5 * (vol1 * (q1[3] + p1) + vol2 * (q2[3] + p2)) + mu * (q1[3] - q2[3]);
}
}  // namespace detail

struct ResCalc {
  KOKKOS_INLINE_FUNCTION void operator()(const double* x1, const double* x2, const double* q1, const double* q2,
                                         const double* adt1, const double* adt2, double* res1, double* res2,
                                         const double* k) const {
    const double dx = x1[0] - x2[0], dy = x1[1] - x2[1];
    const double mu = 0.5 * (*adt1 + *adt2) * k[K_EPS];
    double f[4];
    detail::flux(q1, q2, dx, dy, mu, k[K_GM1], f);
    for (int n = 0; n < 4; ++n) {
      res1[n] += f[n];
      res2[n] -= f[n];
    }
  }
};

struct BresCalc {
  KOKKOS_INLINE_FUNCTION void operator()(const double* x1, const double* x2, const double* q1, const double* adt1,
                                         double* res1, const int* bound, const double* k) const {
    const double dx = x1[0] - x2[0], dy = x1[1] - x2[1];
    if (*bound == 1) {
      const double p1 = detail::pressure(q1, k[K_GM1]);
      res1[1] += p1 * dy;
      res1[2] -= p1 * dx;
    } else {
      const double mu = (*adt1) * k[K_EPS];
      double f[4];
      detail::flux(q1, k + K_QINF, dx, dy, mu, k[K_GM1], f);
      for (int n = 0; n < 4; ++n) res1[n] += f[n];
    }
  }
};

struct Update {
  KOKKOS_INLINE_FUNCTION void operator()(const double* qold, double* q, double* res, const double* adt,
                                         double* rms) const {
    for (int n = 0; n < 4; ++n) {
      const double del = res[n] / *adt;
      q[n] = qold[n] - del;
      res[n] = 0.0;
      *rms += del * del;
    }
  }
};

// Sets, maps, dats, globals and the five loops of one airfoil run. Initial state: q = qold = qinf,
// res = 0, adt = 0.
class Problem {
 public:
  Problem(const MeshData& mesh, const Constants& constants);

  Set nodes, edges, bedges, cells;
  Map pedge, pecell, pbedge, pbecell, pcell;
  Dat<double, 2> x;
  Dat<double, 4> q, qold, res;
  Dat<double, 1> adt;
  Dat<int, 1> bound;
  Global<double, n_constants> k;  // constant: gam, gm1, cfl, eps, qinf[4]
  Global<double, 1> rms;          // mutable, INC in update

  ParLoopBase& save_soln() { return *save_soln_; }
  ParLoopBase& adt_calc() { return *adt_calc_; }
  ParLoopBase& res_calc() { return *res_calc_; }
  ParLoopBase& bres_calc() { return *bres_calc_; }
  ParLoopBase& update() { return *update_; }
  std::vector<ParLoopBase*> loops() {
    return {save_soln_.get(), adt_calc_.get(), res_calc_.get(), bres_calc_.get(), update_.get()};
  }

  // One step k (adt_calc, res_calc, bres_calc, rms = 0, update); returns sqrt(rms / ncell). A
  // non-finite state is a korch::Error naming the iteration, the step and the first such cell.
  double step(Executor& executor, int k = 0);
  // One iteration: save_soln, then two steps. Returns the rms of both steps.
  std::array<double, 2> iterate(Executor& executor);

  // The current cell state, and its largest absolute difference from `reference`.
  CellState state() const;
  double max_difference(const CellState& reference) const;

 private:
  [[noreturn]] void throw_non_finite(int k) const;
  int ncell_;
  int iteration_ = 0;  // iterations started by iterate()
  std::unique_ptr<ParLoopBase> save_soln_, adt_calc_, res_calc_, bres_calc_, update_;
};

}  // namespace korch::mesh::airfoil
