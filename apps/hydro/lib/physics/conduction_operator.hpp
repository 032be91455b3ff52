// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The linear system of one backward-Euler conduction step on any mesh of cells, and its solve by
// conjugate gradients built from Kokkos Kernels (docs/hydro-verification.md, "Conduction").
//
// A finite-volume step of dT/dt = kappa * Laplacian(T) over cells of volume V_i, with the flux
// between two cells that share a face taken from their two centres (area over centre distance
// times the difference), is
//   (W + kappa dt K) T_new = W T_old,
// W the diagonal of the cells' volumes over a reference volume, K the graph Laplacian of the face
// couplings over the same volume: symmetric, rows summing to 0. The matrix is then symmetric
// positive definite and the total heat sum_i W_i T_i is kept: where the weights differ, CG is
// deflated by the constant vector so that its residual never holds a share of the heat.
#pragma once

#include "conduction.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace korch::hydro {

// K and W on the host, built row by row (rows in the order of the temperatures).
class ConductionSystem {
 public:
  // Row `rows()` couples to `column` through a face of coupling `c` (area / centre distance over the
  // reference volume); the same pair may be given twice (both neighbours one cell), which adds up.
  void couple(int column, double c);
  // Ends the row: its weight (volume over the reference volume) and the couplings given since.
  void end_row(double weight);

  int rows() const noexcept { return static_cast<int>(weight_.size()); }
  const std::vector<std::size_t>& row_start() const noexcept { return row_start_; }
  const std::vector<int>& columns() const noexcept { return columns_; }
  const std::vector<double>& laplacian() const noexcept { return laplacian_; }
  const std::vector<double>& weights() const noexcept { return weight_; }

 private:
  std::vector<std::pair<int, double>> row_;  // the open row's couplings
  std::vector<std::size_t> row_start_{0};
  std::vector<int> columns_;
  std::vector<double> laplacian_;
  std::vector<double> weight_;
};

// The system's matrix on korch::DeviceExecSpace and CG's work vectors; solves for any kappa dt.
// Lives between Kokkos::initialize and Kokkos::finalize. Without Kokkos Kernels, solve() throws.
class ConductionOperator {
 public:
  explicit ConductionOperator(const ConductionSystem& system);
  ~ConductionOperator();
  ConductionOperator(const ConductionOperator&) = delete;
  ConductionOperator& operator=(const ConductionOperator&) = delete;

  int rows() const noexcept { return rows_; }
  // One backward-Euler step of the temperatures (one per row) with kappa dt, CG from the old
  // temperatures to relative tolerance tol (||b - A x|| <= tol ||b||, b = W T_old) in at most
  // max_iter iterations. Throws korch::Error naming `who` if CG does not reach tol (the
  // temperatures are then left unchanged) or on a size that is not rows().
  ConductionResult solve(std::vector<double>& temperature, double kappa_dt, double tol, int max_iter,
                         const std::string& who) const;

 private:
  struct Device;
  int rows_ = 0;
  std::vector<double> weights_;
  bool uniform_weights_ = true;  // one level: CG keeps the total heat without deflation
  double total_weight_ = 0;
  std::unique_ptr<Device> device_;
};

}  // namespace korch::hydro
