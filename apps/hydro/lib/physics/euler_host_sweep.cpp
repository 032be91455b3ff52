// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The host sweep of the hydro update (docs/hydro-verification.md, "The host sweep"): primitives
// once per cell, the Hancock prediction and the strong-shock test once per cell from those, each
// face flux once, then the update; every phase a loop over contiguous rows of the block's arrays
// with neighbours at fixed offsets. Each quantity comes from the same functions of euler.hpp as in
// EulerKernel with the same inputs, so the new state is bitwise the per-cell kernel's.
#include "euler_host_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace korch::hydro {

namespace {

using Index = std::ptrdiff_t;

// Tells the compiler that a loop's iterations are independent (its arrays do not overlap), so that
// it vectorizes the loop without run-time overlap checks. GCC only: nvcc's front end would warn
// about a pragma it does not know, and clang's `vectorize(assume_safety)` is an order that turns
// into a warning (an error with -Werror) wherever the vectorizer then declines, as it does for
// some of these loops in the HIP build.
#if defined(__NVCC__) || defined(__clang__)
#define KORCH_HYDRO_INDEPENDENT_ITERATIONS
#elif defined(__GNUC__)
#define KORCH_HYDRO_INDEPENDENT_ITERATIONS _Pragma("GCC ivdep")
#else
#define KORCH_HYDRO_INDEPENDENT_ITERATIONS
#endif

// Calls f(c0, c1) for flat-index ranges [c0, c1) that together are the cells [a, b) of a
// LayoutRight array of extents e: one range per (i, j), or per i where [a, b) spans all of k (the
// 2-D grids, whose k extent is 1), or a single one where it spans j and k too.
template <class F>
void for_rows(const int e[3], const int a[3], const int b[3], F&& f) {
  const Index s0 = Index{e[1]} * e[2], s1 = e[2];
  const bool full_k = a[2] == 0 && b[2] == e[2];
  if (full_k && a[1] == 0 && b[1] == e[1]) {
    f(a[0] * s0, b[0] * s0);
    return;
  }
  for (Index i = a[0]; i < b[0]; ++i) {
    if (full_k) {
      f(i * s0 + a[1] * s1, i * s0 + b[1] * s1);
      continue;
    }
    for (Index j = a[1]; j < b[1]; ++j) f(i * s0 + j * s1 + a[2], i * s0 + j * s1 + b[2]);
  }
}

// Calls f(c0, c1) for the rows of the cells within `reach` steps of the box [lo, hi), a step being
// one cell along one of the Dim active axes: the cells whose distances outside the box along those
// axes sum to at most reach. The sweep needs no other: a cell beyond an edge or corner of the box
// takes part in no face flux of it (with small blocks or tiles such cells are a tenth or more of
// the box grown along every axis). Rows run along the last active axis.
template <int Dim, class F>
void for_rows_near(const int e[3], const int lo[3], const int hi[3], int reach, F&& f) {
  int a[3], b[3];
  for (int d = 0; d < 3; ++d) {
    a[d] = lo[d];
    b[d] = hi[d];
  }
  const auto beyond = [&](int axis, int x) {
    return x < lo[axis] ? lo[axis] - x : x < hi[axis] ? 0 : x - hi[axis] + 1;
  };
  const auto row = [&](int steps_used) {
    a[Dim - 1] = lo[Dim - 1] - (reach - steps_used);
    b[Dim - 1] = hi[Dim - 1] + (reach - steps_used);
    for_rows(e, a, b, f);
  };
  if constexpr (Dim == 1) {
    row(0);
  } else {
    for (int i = lo[0] - reach; i < hi[0] + reach; ++i) {
      a[0] = i;
      b[0] = i + 1;
      const int used = beyond(0, i);
      if constexpr (Dim == 2) {
        row(used);
      } else {
        for (int j = lo[1] - (reach - used); j < hi[1] + (reach - used); ++j) {
          a[1] = j;
          b[1] = j + 1;
          row(used + beyond(1, j));
        }
      }
    }
  }
}

// The per-thread scratch of the sweep: structure-of-arrays on the block's index space, so that a
// neighbour along d is at a fixed offset (the stride of d) in every array.
struct Scratch {
  std::vector<double> values;
  std::vector<unsigned char> shock;
  Index n = 0;  // cells of the block
  double* array(int a) { return values.data() + static_cast<std::size_t>(a) * static_cast<std::size_t>(n); }
};

// Scratch array numbers: primitives W, predicted states Wh, slopes S along d, then fluxes F along d
// (flux_array(dim)); a sweep in dim dimensions uses n_arrays(dim) arrays.
constexpr int w_array = 0, wh_array = 5, slope_array = 10;
constexpr int flux_array(int dim) { return slope_array + 5 * dim; }
constexpr int n_arrays(int dim) { return flux_array(dim) + 5 * dim; }

// The face fluxes along one direction of a row of faces [c0, c1): HLLC for every face in a loop
// without branches (it vectorizes), then HLLE over it for the faces of strong-shock cells.
struct Face {
  double* const* Wh;  // predicted states, 5 arrays
  double* const* S;   // slopes along the direction, 5 arrays
  const unsigned char* shock;
  double* const* F;  // fluxes out, 5 arrays
  Index stride;      // of the direction
  double gamma;

  template <int D>
  void fluxes(Index c0, Index c1) const {
    const double *const w0 = Wh[0], *const w1 = Wh[1], *const w2 = Wh[2], *const w3 = Wh[3], *const w4 = Wh[4];
    const double *const s0 = S[0], *const s1 = S[1], *const s2 = S[2], *const s3 = S[3], *const s4 = S[4];
    double *const f0 = F[0], *const f1 = F[1], *const f2 = F[2], *const f3 = F[3], *const f4 = F[4];
    const Index s = stride;
    // The arrays written are none of those read: no dependence between iterations.
    KORCH_HYDRO_INDEPENDENT_ITERATIONS
    for (Index c = c0; c < c1; ++c) {
      const double L[5] = {w0[c - s] + 0.5 * s0[c - s], w1[c - s] + 0.5 * s1[c - s], w2[c - s] + 0.5 * s2[c - s],
                           w3[c - s] + 0.5 * s3[c - s], w4[c - s] + 0.5 * s4[c - s]};
      const double R[5] = {w0[c] - 0.5 * s0[c], w1[c] - 0.5 * s1[c], w2[c] - 0.5 * s2[c], w3[c] - 0.5 * s3[c],
                           w4[c] - 0.5 * s4[c]};
      double Fc[5];
      hllc_flux(L, R, D, gamma, Fc);
      f0[c] = Fc[0];
      f1[c] = Fc[1];
      f2[c] = Fc[2];
      f3[c] = Fc[3];
      f4[c] = Fc[4];
    }
    for (Index c = c0; c < c1; ++c) {
      if (!(shock[c - s] || shock[c])) continue;
      double L[5], R[5], Fc[5];
      for (int v = 0; v < 5; ++v) {
        L[v] = Wh[v][c - s] + 0.5 * S[v][c - s];
        R[v] = Wh[v][c] - 0.5 * S[v][c];
      }
      hlle_flux(L, R, D, gamma, Fc);
      for (int v = 0; v < 5; ++v) F[v][c] = Fc[v];
    }
  }
};

// The Hancock predictions, slopes and strong-shock flags of a row of cells [c0, c1) from the
// primitives. Every array is addressed as the scratch's start plus the array's number times its
// length: no pointers to load from memory in the loop, which then vectorizes.
template <int Dim>
struct Prediction {
  double* values;  // Scratch::values
  Index n;         // Scratch::n
  unsigned char* shock;
  const Index* stride;
  const EulerParams& p;

  void row(Index c0, Index c1) const {
    double* const x = values;
    const Index len = n;
    Index st[Dim];
    for (int d = 0; d < Dim; ++d) st[d] = stride[d];
    unsigned char* const sh = shock;
    const EulerParams q = p;
    // The arrays written are none of those read: no dependence between iterations.
    KORCH_HYDRO_INDEPENDENT_ITERATIONS
    for (Index c = c0; c < c1; ++c) {
      double Wc[5], Wm[3][5], Wp[3][5], Whc[5], Sc[3][5];
      for (int v = 0; v < 5; ++v) Wc[v] = x[(w_array + v) * len + c];
      for (int d = 0; d < Dim; ++d) {
        for (int v = 0; v < 5; ++v) {
          Wm[d][v] = x[(w_array + v) * len + c - st[d]];
          Wp[d][v] = x[(w_array + v) * len + c + st[d]];
        }
      }
      hancock_predict(Wc, Wm, Wp, q, Dim, Whc, Sc);
      for (int v = 0; v < 5; ++v) x[(wh_array + v) * len + c] = Whc[v];
      for (int d = 0; d < Dim; ++d)
        for (int v = 0; v < 5; ++v) x[(slope_array + 5 * d + v) * len + c] = Sc[d][v];
    }
    // The flags in a loop of their own: bytes and doubles in one loop keep it from vectorizing.
    const double* const pressure = x + (w_array + 4) * len;
    for (Index c = c0; c < c1; ++c) {
      double pm[3], pp[3];
      for (int d = 0; d < Dim; ++d) {
        pm[d] = pressure[c - st[d]];
        pp[d] = pressure[c + st[d]];
      }
      sh[c] = strong_shock_from(pressure[c], pm, pp, Dim);
    }
  }
};

// The update: the same sum over directions as EulerKernel's.
template <int Dim>
void apply_fluxes(double* const (&F)[3][5], const int e[3], const Index stride[3], const int lo[3], const int hi[3],
                  const EulerParams& p, const double* const (&u)[5], double* const (&unew)[5]) {
  double l[3] = {0.0, 0.0, 0.0};
  for (int d = 0; d < Dim; ++d) l[d] = p.dt / p.dx[d];
  for_rows(e, lo, hi, [&](Index c0, Index c1) {
    KORCH_HYDRO_INDEPENDENT_ITERATIONS
    for (Index c = c0; c < c1; ++c) {
      double dU[5] = {0, 0, 0, 0, 0};
      for (int d = 0; d < Dim; ++d)
        for (int v = 0; v < 5; ++v) dU[v] -= l[d] * (F[d][v][c + stride[d]] - F[d][v][c]);
      for (int v = 0; v < 5; ++v) unew[v][c] = u[v][c] + dU[v];
    }
  });
}

// The sweep with the number of dimensions a constant: the loops over directions unroll.
// The fluxes along d through the box's low and high faces, from the sweep's flux arrays F.
void copy_box_faces(double* const (&F)[5], int d, const Index stride[3], const int lo[3], const int hi[3],
                    const BoxFaceFluxes& faces) {
  const int p = d == 0 ? 1 : 0, q = d == 2 ? 1 : 2;
  const int np = hi[p] - lo[p], nq = hi[q] - lo[q];
  const std::size_t per_var = static_cast<std::size_t>(np) * static_cast<std::size_t>(nq);
  for (int side = 0; side < 2; ++side) {
    double* out = faces.at[d][side];
    if (out == nullptr) continue;
    const Index plane = Index{side == 0 ? lo[d] : hi[d]} * stride[d];
    for (int fq = 0; fq < nq; ++fq)
      for (int fp = 0; fp < np; ++fp) {
        const Index c = plane + Index{lo[p] + fp} * stride[p] + Index{lo[q] + fq} * stride[q];
        const std::size_t at =
            static_cast<std::size_t>(fp) + static_cast<std::size_t>(np) * static_cast<std::size_t>(fq);
        for (int v = 0; v < 5; ++v) out[static_cast<std::size_t>(v) * per_var + at] = F[v][c];
      }
  }
}

template <int Dim>
void sweep(const HostVar (&vars)[n_grid_vars], const EulerParams& p, const int lo[3], const int hi[3],
           const BoxFaceFluxes* faces) {
  const int e[3] = {static_cast<int>(vars[0].extent(0)), static_cast<int>(vars[0].extent(1)),
                    static_cast<int>(vars[0].extent(2))};
  const Index stride[3] = {Index{e[1]} * e[2], e[2], 1};
  thread_local Scratch scratch;
  scratch.n = Index{e[0]} * e[1] * e[2];
  scratch.values.resize(static_cast<std::size_t>(n_arrays(Dim)) * static_cast<std::size_t>(scratch.n));
  scratch.shock.resize(static_cast<std::size_t>(scratch.n));
  double* W[5];
  double* Wh[5];
  double* S[3][5] = {};
  double* F[3][5] = {};
  for (int v = 0; v < 5; ++v) {
    W[v] = scratch.array(w_array + v);
    Wh[v] = scratch.array(wh_array + v);
    for (int d = 0; d < Dim; ++d) {
      S[d][v] = scratch.array(slope_array + 5 * d + v);
      F[d][v] = scratch.array(flux_array(Dim) + 5 * d + v);
    }
  }
  unsigned char* shock = scratch.shock.data();
  const double* u[5];
  double* unew[5];
  for (int v = 0; v < 5; ++v) {
    u[v] = vars[p.state + v].data();
    unew[v] = vars[p.next_state + v].data();
  }
  // Primitives of the cells two steps from the box or nearer (the predictions below read them).
  for_rows_near<Dim>(e, lo, hi, 2, [&](Index c0, Index c1) {
    KORCH_HYDRO_INDEPENDENT_ITERATIONS
    for (Index c = c0; c < c1; ++c) {
      const double U[5] = {u[0][c], u[1][c], u[2][c], u[3][c], u[4][c]};
      double Wc[5];
      cons_to_prim(U, Wc, p.gamma);
      for (int v = 0; v < 5; ++v) W[v][c] = Wc[v];
    }
  });

  // Prediction, slopes and strong-shock flag of the box and of the cells on the other side of its
  // faces (one step from it).
  const Prediction<Dim> prediction{scratch.values.data(), scratch.n, shock, stride, p};
  for_rows_near<Dim>(e, lo, hi, 1, [&](Index c0, Index c1) { prediction.row(c0, c1); });

  // Face fluxes: face c along d lies between cells c - stride[d] and c; the faces of the box along
  // d are those of its cells and of the cells one past its upper side.
  int a[3], b[3];
  for (int d = 0; d < Dim; ++d) {
    for (int x = 0; x < 3; ++x) {
      a[x] = lo[x];
      b[x] = x == d ? hi[x] + 1 : hi[x];
    }
    const Face face{Wh, S[d], shock, F[d], stride[d], p.gamma};
    if (d == 0) for_rows(e, a, b, [&](Index c0, Index c1) { face.fluxes<0>(c0, c1); });
    if (d == 1) for_rows(e, a, b, [&](Index c0, Index c1) { face.fluxes<1>(c0, c1); });
    if (d == 2) for_rows(e, a, b, [&](Index c0, Index c1) { face.fluxes<2>(c0, c1); });
    if (faces != nullptr) copy_box_faces(F[d], d, stride, lo, hi, *faces);
  }

  apply_fluxes<Dim>(F, e, stride, lo, hi, p, u, unew);
}

}  // namespace

void update_box_host(const HostVar (&vars)[n_grid_vars], const EulerParams& p, const int lo[3], const int hi[3],
                     const BoxFaceFluxes* faces) {
  if (p.dim == 3)
    sweep<3>(vars, p, lo, hi, faces);
  else if (p.dim == 2)
    sweep<2>(vars, p, lo, hi, faces);
  else
    sweep<1>(vars, p, lo, hi, faces);
}

namespace {

// cell_dt of the cells [c0, c1) of a row into dt[0 .. c1 - c0): the same operations in the same
// order, so the same bits, in a loop without a reduction, which then vectorizes.
template <int Dim>
void row_dts(const double* const (&u)[5], const EulerParams& p, Index c0, Index c1, double* dt) {
  constexpr double largest = 1.7976931348623157e308;  // as in cell_dt
  const double* const rho = u[0];
  const double *const m1 = u[1], *const m2 = u[2], *const m3 = u[3], *const e = u[4];
  const double gamma = p.gamma;
  double dx[3] = {1.0, 1.0, 1.0};
  for (int d = 0; d < Dim; ++d) dx[d] = p.dx[d];
  KORCH_HYDRO_INDEPENDENT_ITERATIONS
  for (Index c = c0; c < c1; ++c) {
    const double U[5] = {rho[c], m1[c], m2[c], m3[c], e[c]};
    double W[5];
    cons_to_prim(U, W, gamma);
    const double sound = std::sqrt(gamma * W[4] / W[0]);
    double s = 0.0;
    for (int d = 0; d < Dim; ++d) s += (std::fabs(W[1 + d]) + sound) / dx[d];
    const double t = 1.0 / s;
    const bool physical = W[0] > 0 && W[0] <= largest && W[4] > 0 && W[4] <= largest && t > 0 && t <= largest;
    dt[c - c0] = physical ? t : unphysical_dt;
  }
}

template <int Dim>
double box_dt_rows(const HostVar (&vars)[n_grid_vars], const EulerParams& p, const int lo[3], const int hi[3]) {
  const int e[3] = {static_cast<int>(vars[0].extent(0)), static_cast<int>(vars[0].extent(1)),
                    static_cast<int>(vars[0].extent(2))};
  const double* u[5];
  for (int v = 0; v < 5; ++v) u[v] = vars[p.next_state + v].data();
  constexpr Index chunk = 64;
  double dt[chunk];
  double m = std::numeric_limits<double>::infinity();
  for_rows(e, lo, hi, [&](Index c0, Index c1) {
    for (Index a = c0; a < c1; a += chunk) {
      const Index b = std::min(c1, a + chunk);
      row_dts<Dim>(u, p, a, b, dt);
      for (Index c = 0; c < b - a; ++c) m = dt[c] < m ? dt[c] : m;
    }
  });
  return m;
}

}  // namespace

double box_dt_host(const HostVar (&vars)[n_grid_vars], const EulerParams& p, const int lo[3], const int hi[3]) {
  switch (p.dim) {
    case 1: return box_dt_rows<1>(vars, p, lo, hi);
    case 2: return box_dt_rows<2>(vars, p, lo, hi);
    default: return box_dt_rows<3>(vars, p, lo, hi);
  }
}

}  // namespace korch::hydro
