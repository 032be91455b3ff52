// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Compressible Euler equations, ideal gas: the per-cell kernel of the hydro step.
//
// Conserved variables (grid variables 0..4): rho, rho*u, rho*v, rho*w, E (total energy per volume);
// the new state of a step is written to variables 5..9 (interior cells only) so that every cell's
// update reads only the old state: no order dependence, the same bits whatever the tiling, team,
// configuration or backend thread count.
//
// Scheme: unsplit MUSCL-Hancock in primitive variables (rho, u, v, w, p), minmod or MC slopes,
// HLLC Riemann solver (Toro, Davis wave-speed estimates). Each cell computes its 2*dim face fluxes
// from the Hancock-predicted states of itself and its face neighbours; a face flux is computed by
// the same arithmetic from the same inputs for both cells that share it, so the update is exactly
// conservative (the fluxes telescope). Stencil: 2 cells in every direction, corners included
// (guard = 2).
#pragma once

#include "euler_constants.hpp"

#include <Kokkos_Core.hpp>

#include <cmath>

// Unrolls the loop that follows completely where the compiler is GCC on the host: the loops over
// directions and variables of the prediction, so that the host sweep's loop over cells around it
// vectorizes (docs/hydro-verification.md, "The host sweep"). Other compilers unroll them unasked or
// run them as loops.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__NVCC__) && !defined(__HIPCC__)
#define KORCH_HYDRO_UNROLL _Pragma("GCC unroll 16")
#else
#define KORCH_HYDRO_UNROLL
#endif

// Unrolls a loop over directions completely in nvcc's device code: with a constant dimension
// (EulerKernel's Dim) every array the loop indexes is then indexed by constants and stays in a GPU
// thread's registers instead of its local memory (docs/benchmarks.md, "The device kernels"). Host
// compilers keep their own choice, and so does hipcc, whose clang unrolls loops of a constant trip
// count by itself and, asked to, reports a run-time count (Dim 0) it cannot unroll as an error.
#if defined(__CUDA_ARCH__)
#define KORCH_DIRECTIONS_UNROLL _Pragma("unroll")
#else
#define KORCH_DIRECTIONS_UNROLL
#endif

namespace korch::hydro {

namespace math {
#if KOKKOS_VERSION >= 40000
using Kokkos::fabs;
using Kokkos::sqrt;
#else
using Kokkos::Experimental::fabs;
using Kokkos::Experimental::sqrt;
#endif
}  // namespace math

struct EulerParams {
  double gamma = 1.4;
  double dt = 0.0;
  double dx[3] = {1.0, 1.0, 1.0};
  int dim = 2;
  Limiter limiter = Limiter::mc;
  // The grid holds two state sets, variables 0..4 and 5..9. A step reads the current one and
  // writes the other, and then the two swap roles: no copy of the new state over the old.
  int state = 0;             // first variable of the current state: 0 or var_new
  int next_state = var_new;  // first variable the step writes
};

// The limited slope of a cell from its one-sided differences a (below) and b (above). Selects, no
// branches: the host sweep's prediction loop vectorizes (docs/hydro-verification.md, "The host
// sweep").
KOKKOS_INLINE_FUNCTION double limit_slope(double a, double b, Limiter lim) {
  const double aa = math::fabs(a), ab = math::fabs(b);
  const double s = a > 0.0 ? 1.0 : -1.0;
  const double smaller = aa < ab ? aa : ab;
  const double m = 2.0 * smaller;
  const double c = 0.5 * (aa + ab);
  const double mc = m < c ? m : c;
  const double magnitude = lim == Limiter::minmod ? smaller : mc;
  return a * b <= 0.0 ? 0.0 : s * magnitude;
}

// Primitive (rho, u, v, w, p) from conserved.
KOKKOS_INLINE_FUNCTION void cons_to_prim(const double U[5], double W[5], double gamma) {
  const double rho = U[0];
  const double inv = 1.0 / rho;
  W[0] = rho;
  W[1] = U[1] * inv;
  W[2] = U[2] * inv;
  W[3] = U[3] * inv;
  W[4] = (gamma - 1.0) * (U[4] - 0.5 * (U[1] * W[1] + U[2] * W[2] + U[3] * W[3]));
}

// Physical flux along direction d of primitive state W.
KOKKOS_INLINE_FUNCTION void euler_flux(const double W[5], int d, double gamma, double F[5]) {
  const double un = W[1 + d];
  const double E = W[4] / (gamma - 1.0) + 0.5 * W[0] * (W[1] * W[1] + W[2] * W[2] + W[3] * W[3]);
  F[0] = W[0] * un;
  F[1] = W[0] * W[1] * un;
  F[2] = W[0] * W[2] * un;
  F[3] = W[0] * W[3] * un;
  F[1 + d] += W[4];
  F[4] = (E + W[4]) * un;
}

// The slowest and fastest signal speeds along d of the Riemann problem between primitive states WL
// and WR (Davis' estimates): what HLLC and HLLE both bound the fan with.
KOKKOS_INLINE_FUNCTION void wave_speeds(const double WL[5], const double WR[5], int d, double gamma, double& SL,
                                        double& SR) {
  const double cL = math::sqrt(gamma * WL[4] / WL[0]);
  const double cR = math::sqrt(gamma * WR[4] / WR[0]);
  const double uL = WL[1 + d], uR = WR[1 + d];
  SL = (uL - cL) < (uR - cR) ? (uL - cL) : (uR - cR);
  SR = (uL + cL) > (uR + cR) ? (uL + cL) : (uR + cR);
}

// HLLC flux along d between primitive states WL (left) and WR (right). Written without branches
// (the star state is computed always, and selects pick the outcome) so that the host sweep's face
// loop vectorizes (docs/hydro-verification.md, "The host sweep"); the selected values are the ones
// the cases give: the physical flux of WL or WR where the fan is supersonic, the star flux of the
// side of the contact otherwise.
KOKKOS_INLINE_FUNCTION void hllc_flux(const double WL[5], const double WR[5], int d, double gamma, double F[5]) {
  const double uL = WL[1 + d], uR = WR[1 + d];
  double SL, SR;
  wave_speeds(WL, WR, d, gamma, SL, SR);
  const double mL = WL[0] * (SL - uL), mR = WR[0] * (SR - uR);
  const double SM = (WR[4] - WL[4] + uL * mL - uR * mR) / (mL - mR);
  // Bitwise | and &: conditions without jumps.
  const bool supersonic = (SL >= 0.0) | (SR <= 0.0);
  const bool left = (SL >= 0.0) | (!(SR <= 0.0) & (SM >= 0.0));
  double W[5];
  for (int v = 0; v < 5; ++v) W[v] = left ? WL[v] : WR[v];
  const double S = left ? SL : SR;
  const double un = W[1 + d];
  double FK[5];
  euler_flux(W, d, gamma, FK);
  const double E = W[4] / (gamma - 1.0) + 0.5 * W[0] * (W[1] * W[1] + W[2] * W[2] + W[3] * W[3]);
  const double U[5] = {W[0], W[0] * W[1], W[0] * W[2], W[0] * W[3], E};
  const double f = W[0] * (S - un) / (S - SM);
  double Us[5];
  Us[0] = f;
  Us[1] = f * W[1];
  Us[2] = f * W[2];
  Us[3] = f * W[3];
  Us[1 + d] = f * SM;
  Us[4] = f * (E / W[0] + (SM - un) * (SM + W[4] / (W[0] * (S - un))));
  for (int v = 0; v < 5; ++v) F[v] = supersonic ? FK[v] : FK[v] + S * (Us[v] - U[v]);
}

// HLLE flux along d (Einfeldt's two-wave solver, the same wave-speed estimates as hllc_flux). More
// dissipative than HLLC across contacts and shear, which is what damps the odd-even decoupling
// (the carbuncle) of HLLC at strong grid-aligned shocks: faces of cells at a strong shock use it.
KOKKOS_INLINE_FUNCTION void hlle_flux(const double WL[5], const double WR[5], int d, double gamma, double F[5]) {
  double SL, SR;
  wave_speeds(WL, WR, d, gamma, SL, SR);
  if (SL >= 0.0) {
    euler_flux(WL, d, gamma, F);
    return;
  }
  if (SR <= 0.0) {
    euler_flux(WR, d, gamma, F);
    return;
  }
  double FL[5], FR[5];
  euler_flux(WL, d, gamma, FL);
  euler_flux(WR, d, gamma, FR);
  const double EL = WL[4] / (gamma - 1.0) + 0.5 * WL[0] * (WL[1] * WL[1] + WL[2] * WL[2] + WL[3] * WL[3]);
  const double ER = WR[4] / (gamma - 1.0) + 0.5 * WR[0] * (WR[1] * WR[1] + WR[2] * WR[2] + WR[3] * WR[3]);
  const double UL[5] = {WL[0], WL[0] * WL[1], WL[0] * WL[2], WL[0] * WL[3], EL};
  const double UR[5] = {WR[0], WR[0] * WR[1], WR[0] * WR[2], WR[0] * WR[3], ER};
  const double inv = 1.0 / (SR - SL);
  for (int v = 0; v < 5; ++v) F[v] = (SR * FL[v] - SL * FR[v] + SL * SR * (UR[v] - UL[v])) * inv;
}

// A cell is at a strong shock when the pressures of it and its face neighbours differ by more than
// this factor (a Mach 2 shock jumps 4.5 times, spread over two or three cells; Sod's shock, 3.0
// times, stays below it and keeps HLLC). The faces of such cells use HLLE (docs/floating-point.md,
// "Carbuncle").
inline constexpr double strong_shock_pressure_ratio = 5.0;

// The flux of one face: HLLE where either cell is at a strong shock, HLLC elsewhere.
KOKKOS_INLINE_FUNCTION void face_flux(const double WL[5], const double WR[5], int d, double gamma, bool shock,
                                      double F[5]) {
  if (shock)
    hlle_flux(WL, WR, d, gamma, F);
  else
    hllc_flux(WL, WR, d, gamma, F);
}

// Whether a cell of pressure pc whose face neighbours have the pressures lo_d[d], hi_d[d] (the
// neighbour below and above along d) is at a strong shock (strong_shock_pressure_ratio). Shared by
// EulerKernel and the host sweep (docs/hydro-verification.md, "The host sweep") so that both decide
// with the same bits.
KOKKOS_INLINE_FUNCTION bool strong_shock_from(double pc, const double lo_d[3], const double hi_d[3], int dim) {
  double lo = pc, hi = pc;
  KORCH_DIRECTIONS_UNROLL
  for (int d = 0; d < dim; ++d) {
    lo = lo_d[d] < lo ? lo_d[d] : lo;
    hi = lo_d[d] > hi ? lo_d[d] : hi;
    lo = hi_d[d] < lo ? hi_d[d] : lo;
    hi = hi_d[d] > hi ? hi_d[d] : hi;
  }
  return hi > strong_shock_pressure_ratio * lo;
}

// Hancock-predicted primitive state Wh (half step) and limited slopes S of a cell of primitive
// state W whose neighbours below and above along d < dim have the primitive states Wm[d] and Wp[d]
// (dim: p.dim, a separate argument so that a caller can make it a constant). Shared by EulerKernel
// and the host sweep (docs/hydro-verification.md, "The host sweep"): one arithmetic, the same bits.
// No branches.
KOKKOS_INLINE_FUNCTION void hancock_predict(const double W[5], const double Wm[3][5], const double Wp[3][5],
                                            const EulerParams& p, int dim, double Wh[5], double S[3][5]) {
  for (int d = 0; d < 3; ++d)
    for (int v = 0; v < 5; ++v) S[d][v] = 0.0;
  KORCH_HYDRO_UNROLL
  for (int d = 0; d < dim; ++d) KORCH_HYDRO_UNROLL
  for (int v = 0; v < 5; ++v) S[d][v] = limit_slope(W[v] - Wm[d][v], Wp[d][v] - W[v], p.limiter);
  for (int v = 0; v < 5; ++v) Wh[v] = W[v];
  KORCH_DIRECTIONS_UNROLL
  for (int d = 0; d < dim; ++d) {
    const double h = 0.5 * p.dt / p.dx[d];
    const double un = W[1 + d];
    const double* s = S[d];
    Wh[0] -= h * (un * s[0] + W[0] * s[1 + d]);
    Wh[1] -= h * (un * s[1]);
    Wh[2] -= h * (un * s[2]);
    Wh[3] -= h * (un * s[3]);
    Wh[1 + d] -= h * (s[4] / W[0]);
    Wh[4] -= h * (un * s[4] + p.gamma * W[4] * s[1 + d]);
  }
  // Positivity: a cell whose predicted face states are not physical falls back to first order.
  bool ok = (Wh[0] > 0.0) & (Wh[4] > 0.0);
  KORCH_DIRECTIONS_UNROLL
  for (int d = 0; d < dim; ++d) {
    // Operands without calls: clang flags a bitwise & on comparisons whose operands call functions.
    const double rho_low = Wh[0] - 0.5 * math::fabs(S[d][0]);
    const double p_low = Wh[4] - 0.5 * math::fabs(S[d][4]);
    ok = ok & (rho_low > 0.0) & (p_low > 0.0);
  }
  for (int v = 0; v < 5; ++v) Wh[v] = ok ? Wh[v] : W[v];
  for (int d = 0; d < 3; ++d)
    for (int v = 0; v < 5; ++v) S[d][v] = ok ? S[d][v] : 0.0;
}

// The update of one cell. View: a rank-3 (i, j, k) view type; u[v] old conserved, unew[v] new.
// Dim: the number of directions where a caller fixes it at compile time (1, 2 or 3; the device
// kernels, docs/benchmarks.md "The device kernels"), or 0 to take p.dim.
template <class View, int Dim = 0>
struct EulerKernel {
  static_assert(Dim >= 0 && Dim <= 3, "EulerKernel: Dim is 1, 2, 3, or 0 for p.dim");
  View u[5];
  View unew[5];
  EulerParams p;

  // A constant where the caller gave one: the loops over directions then unroll, and the arrays
  // they index stay in registers instead of a GPU thread's local memory.
  KOKKOS_INLINE_FUNCTION int dim() const { return Dim > 0 ? Dim : p.dim; }

  KOKKOS_INLINE_FUNCTION void load(int i, int j, int k, double W[5]) const {
    double U[5];
    for (int v = 0; v < 5; ++v) U[v] = u[v](i, j, k);
    cons_to_prim(U, W, p.gamma);
  }

  KOKKOS_INLINE_FUNCTION double pressure(int i, int j, int k) const {
    double W[5];
    load(i, j, k, W);
    return W[4];
  }

  // Whether cell (i, j, k) is at a strong shock (strong_shock_pressure_ratio); reads the cell and
  // its face neighbours, so a face's two cells need the block's second guard layer.
  KOKKOS_INLINE_FUNCTION bool strong_shock(int i, int j, int k) const {
    double lo_d[3], hi_d[3];
    KORCH_DIRECTIONS_UNROLL
    for (int d = 0; d < dim(); ++d) {
      lo_d[d] = pressure(i - (d == 0), j - (d == 1), k - (d == 2));
      hi_d[d] = pressure(i + (d == 0), j + (d == 1), k + (d == 2));
    }
    return strong_shock_from(pressure(i, j, k), lo_d, hi_d, dim());
  }

  // Hancock-predicted primitive state (half step) and limited slopes of cell (i, j, k).
  KOKKOS_INLINE_FUNCTION void predict(int i, int j, int k, double Wh[5], double S[3][5]) const {
    double W[5], Wm[3][5], Wp[3][5];
    load(i, j, k, W);
    KORCH_DIRECTIONS_UNROLL
    for (int d = 0; d < dim(); ++d) {
      load(i - (d == 0), j - (d == 1), k - (d == 2), Wm[d]);
      load(i + (d == 0), j + (d == 1), k + (d == 2), Wp[d]);
    }
    hancock_predict(W, Wm, Wp, p, dim(), Wh, S);
  }

  // predict() and strong_shock() of cell (i, j, k) from one load of each cell they read: the staged
  // device kernels' prediction, the same bits as the two.
  KOKKOS_INLINE_FUNCTION bool predict_with_shock(int i, int j, int k, double Wh[5], double S[3][5]) const {
    double W[5], Wm[3][5], Wp[3][5], lo_d[3], hi_d[3];
    load(i, j, k, W);
    KORCH_DIRECTIONS_UNROLL
    for (int d = 0; d < dim(); ++d) {
      load(i - (d == 0), j - (d == 1), k - (d == 2), Wm[d]);
      load(i + (d == 0), j + (d == 1), k + (d == 2), Wp[d]);
      lo_d[d] = Wm[d][4];
      hi_d[d] = Wp[d][4];
    }
    hancock_predict(W, Wm, Wp, p, dim(), Wh, S);
    return strong_shock_from(W[4], lo_d, hi_d, dim());
  }

  // The flux through the low face along d of cell (i, j, k), by the arithmetic operator() uses for
  // that face from the same cells (so the same bits): what an adaptive mesh's flux correction
  // needs at a block's faces. Reads cells i - 2 .. i + 1 along d.
  KOKKOS_INLINE_FUNCTION void low_face_flux(int i, int j, int k, int d, double F[5]) const {
    const int di = d == 0, dj = d == 1, dk = d == 2;
    double Wl[5], Sl[3][5], Wr[5], Sr[3][5], L[5], R[5];
    predict(i - di, j - dj, k - dk, Wl, Sl);
    predict(i, j, k, Wr, Sr);
    for (int v = 0; v < 5; ++v) {
      L[v] = Wl[v] + 0.5 * Sl[d][v];
      R[v] = Wr[v] - 0.5 * Sr[d][v];
    }
    face_flux(L, R, d, p.gamma, strong_shock(i, j, k) || strong_shock(i - di, j - dj, k - dk), F);
  }

  // The same with the direction fixed at compile time (the device kernels: see dim()).
  template <int D>
  KOKKOS_INLINE_FUNCTION void low_face_flux(int i, int j, int k, double F[5]) const {
    low_face_flux(i, j, k, D, F);
  }

  KOKKOS_INLINE_FUNCTION void operator()(int i, int j, int k) const {
    double U[5];
    update(i, j, k, U);
  }

  // Writes the cell's new state and leaves it in U too, for a dt computed in the same pass.
  KOKKOS_INLINE_FUNCTION void update(int i, int j, int k, double U[5]) const {
    double Wh[5], S[3][5];
    predict(i, j, k, Wh, S);
    const bool shock_here = strong_shock(i, j, k);
    double dU[5] = {0, 0, 0, 0, 0};
    KORCH_DIRECTIONS_UNROLL
    for (int d = 0; d < dim(); ++d) {
      const int di = d == 0, dj = d == 1, dk = d == 2;
      double Wn[5], Sn[3][5], L[5], R[5], Fm[5], Fp[5];
      // left face
      predict(i - di, j - dj, k - dk, Wn, Sn);
      for (int v = 0; v < 5; ++v) {
        L[v] = Wn[v] + 0.5 * Sn[d][v];
        R[v] = Wh[v] - 0.5 * S[d][v];
      }
      face_flux(L, R, d, p.gamma, shock_here || strong_shock(i - di, j - dj, k - dk), Fm);
      // right face
      predict(i + di, j + dj, k + dk, Wn, Sn);
      for (int v = 0; v < 5; ++v) {
        L[v] = Wh[v] + 0.5 * S[d][v];
        R[v] = Wn[v] - 0.5 * Sn[d][v];
      }
      face_flux(L, R, d, p.gamma, shock_here || strong_shock(i + di, j + dj, k + dk), Fp);
      const double l = p.dt / p.dx[d];
      for (int v = 0; v < 5; ++v) dU[v] -= l * (Fp[v] - Fm[v]);
    }
    for (int v = 0; v < 5; ++v) {
      U[v] = u[v](i, j, k) + dU[v];
      unew[v](i, j, k) = U[v];
    }
  }
};

// What cell_dt gives a cell that is not physical: negative, so that every minimum over cells keeps
// it (a NaN would be lost: min(x, NaN) written as a comparison is x) and the step stops.
constexpr double unphysical_dt = -1.0;

// Largest stable dt of one cell: 1 / sum_d (|u_d| + c) / dx_d (times the CFL number elsewhere), or
// unphysical_dt where the density or the pressure is not positive and finite or the dt is not
// (a momentum or an energy that is not finite). Dim as for EulerKernel: 0 takes p.dim.
template <int Dim = 0>
KOKKOS_INLINE_FUNCTION double cell_dt(const double U[5], const EulerParams& p) {
  const int dim = Dim > 0 ? Dim : p.dim;
  constexpr double largest = 1.7976931348623157e308;  // DBL_MAX: x <= largest is false for inf and NaN
  double W[5];
  cons_to_prim(U, W, p.gamma);
  const double c = math::sqrt(p.gamma * W[4] / W[0]);
  double s = 0.0;
  KORCH_DIRECTIONS_UNROLL
  for (int d = 0; d < dim; ++d) s += (math::fabs(W[1 + d]) + c) / p.dx[d];
  const double t = 1.0 / s;
  const bool physical = W[0] > 0 && W[0] <= largest && W[4] > 0 && W[4] <= largest && t > 0 && t <= largest;
  return physical ? t : unphysical_dt;
}

}  // namespace korch::hydro
