// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Operator-split implicit thermal conduction of the hydro app: one backward-Euler step of
// dT/dt = kappa * Laplacian(T) on the whole grid, solved by a conjugate gradient built from Kokkos
// Kernels (KokkosSparse::CrsMatrix + spmv, KokkosBlas dot/axpby/nrm2) on korch::DeviceExecSpace —
// code run between runtime cycles through another portability layer.
//
// The matrix is A = I - dt*kappa*L with L the 7-point (5-point in 2D, 3-point in 1D) Laplacian:
// row c has 1 + sum_d 2*dt*kappa/dx_d^2 on the diagonal and -dt*kappa/dx_d^2 for each neighbour
// along d. A dimension with n[d] == 1 has no coupling. With zero-flux boundaries a face on the
// boundary carries no flux (its neighbour term and its share of the diagonal are dropped); with
// periodic ones the neighbour wraps around. A is symmetric positive definite and its columns sum to
// 1, so total heat sum(T) is conserved: CG starts from the old temperature and keeps it to round-off.
//
// The matrix is cached (one entry, for the last (n, dx, periodic)); calls are meant for
// the main thread only (the one that initialized Kokkos), which is also what Kokkos::OpenMP needs.
#pragma once

#include <array>
#include <vector>

namespace korch::hydro {

struct ConductionResult {
  int iterations = 0;   // CG iterations taken
  double residual = 0;  // true relative residual ||b - A x|| / ||b|| of the returned temperature
};

// One backward-Euler step of dT/dt = kappa * Laplacian(T) on the global uniform grid (interior cells,
// x fastest: index i + n[0]*(j + n[1]*k)), periodic (true) or zero-flux (false) boundaries, CG to
// relative tolerance tol (||b - A x|| <= tol * ||b||, b the old temperature).
// Throws korch::Error if CG does not reach tol in max_iter iterations (naming both; `temperature`
// is then left unchanged), if korch was built without Kokkos Kernels, or on bad arguments: n[d] < 1,
// temperature.size() != n[0]*n[1]*n[2], dx[d] <= 0 or not finite, kappa < 0, dt <= 0, tol <= 0,
// max_iter < 1, or non-finite temperatures. kappa == 0 returns the temperature unchanged (0 iterations).
ConductionResult conduct(std::vector<double>& temperature, std::array<int, 3> n, std::array<double, 3> dx, double kappa,
                         double dt, bool periodic, double tol = 1e-10, int max_iter = 1000);

}  // namespace korch::hydro
