// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The exact solution of the Riemann problem of the 1-D Euler equations, ideal gas (Toro, "Riemann
// Solvers and Numerical Methods for Fluid Dynamics", ch. 4): the reference of the Sod tests.
#pragma once

namespace korch::hydro {

struct Primitive1D {
  double rho = 1.0;
  double u = 0.0;
  double p = 1.0;
};

// The solution at similarity coordinate s = (x - x0) / t. Throws korch::Error when the states are
// not physical or generate a vacuum.
Primitive1D exact_riemann(const Primitive1D& left, const Primitive1D& right, double gamma, double s);

}  // namespace korch::hydro
